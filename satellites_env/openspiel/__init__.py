"""Satellites in OpenSpiel (the `openspiel` extra): the game `python_satellites` and the bots.

`satellites_env.openspiel.game` registers the game with ``pyspiel.register_game`` when imported;
`satellites_env.openspiel.bots` has OpenSpiel's MCTS bot as an agent (``openspiel-mcts:N``) and
any agent as a ``pyspiel.Bot``. Nothing here is imported by the rest of the package until a
spec or a user names it.
"""
