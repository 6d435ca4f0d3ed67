"""The TEN engine: a pure functional core (standard library and msgspec only).

Entry points:
- `domain.engine.new_game(players, seed, deck=, starting_seat=, rules=) -> (GameState, events)`
- `domain.engine.to_act(state) -> seat | None`: whose decision the game waits for
- `domain.legal.legal_actions(state, seat) -> [Action]`: with the payment the service picks
- `domain.engine.apply(state, seat, action) -> (GameState, events)`, or `RuleError(code)`:
  `decide(state, seat, action) -> facts` folded by `evolve(state, fact) -> GameState`
- `domain.views.public_view(state) -> PublicView`: no draw-pile order, no seed
- `domain.replay.replay(events)`: every public state rebuilt from the event log (`evolve`)
- `domain.scoring.score_collection(cards, perfect_bonus)`: optimal wild-card assignment
- `domain.bots.BOTS`, `domain.simulation.play_bots(state)`, `play_game(bots, seed)`
"""
