"""The API's routes, one router per concept; ``serve/api.py`` includes each.

A route gets what it needs through the dependencies of ``serve/deps.py`` (the appliance, the
metrics, the limits, the lanes of the model's queue) and declares the action it takes with
``Depends(require(...))``. Adding a concept is one module here with its ``router``, and one
``include_router`` line in ``create_app``.
"""
