"""Where Kindling replaces or extends a part of Connexion, Starlette, Flask or uvicorn: one module per override."""
