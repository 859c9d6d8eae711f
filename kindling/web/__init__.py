"""The web edge: everything that touches Connexion, Starlette and Flask."""
