"""The TEN engine: a pure functional core (standard library and msgspec only).

Entry points:
- `domain.game.engine.new_game(players, seed, deck=, starting_seat=, rules=) -> (GameState, events)`
- `domain.game.engine.to_act(state) -> seat | None`: whose decision the game waits for
- `domain.game.legal.legal_actions(state, seat) -> [Action]`: with the payment the service picks
- `domain.game.engine.apply(state, seat, action) -> (GameState, events)`, or `RuleError(code)`:
  `decide(state, seat, action) -> facts` folded by `evolve(state, fact) -> GameState`
- `domain.game.views.public_view(state) -> PublicView`: no draw-pile order, no seed
- `domain.game.replay.replay(events)`: every public state rebuilt from the event log (`evolve`)
- `domain.game.rejudge.rejudge(events, deck)`: a whole log judged again, action by action (`apply`)
- `domain.game.scoring.score_collection(cards, perfect_bonus)`: optimal wild-card assignment
- `domain.bots.basic.BOTS`, `domain.bots.simulation.play_bots(state)`, `play_game(bots, seed)`
"""
