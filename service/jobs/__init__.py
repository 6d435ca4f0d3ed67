"""Background work: one leased queue port and one worker for every queue (`worker`)."""
