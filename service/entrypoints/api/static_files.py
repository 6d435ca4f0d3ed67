"""The files under /static (the web client, the rules page), served by Litestar's static-files
router from a local file system that answers a path no file can have with "not found".

A client chooses the path: with a NUL byte in it (`/static/app/%00`) Python's `os.stat`
raises ValueError, with a segment longer than the file system allows it raises OSError
(ENAMETOOLONG), and Litestar answered both with a 500 and a traceback in the log, one per
request. Neither names a file, so both are a 404 like any other missing file.
"""

from __future__ import annotations

import errno
from typing import Any

from litestar.file_system import BaseLocalFileSystem
from litestar.types import PathType
from litestar.types.file_types import FileInfo

_NO_SUCH_NAME = frozenset({errno.ENAMETOOLONG, errno.ENOTDIR, errno.ELOOP, errno.EINVAL})


class LocalFiles(BaseLocalFileSystem):
    """The local file system, where a name that cannot exist is simply not found."""

    async def info(self, path: PathType, **kwargs: Any) -> FileInfo:
        try:
            return await super().info(path, **kwargs)
        except ValueError:  # an embedded NUL byte
            raise FileNotFoundError(path) from None
        except OSError as exc:
            if exc.errno in _NO_SUCH_NAME:
                raise FileNotFoundError(path) from None
            raise
