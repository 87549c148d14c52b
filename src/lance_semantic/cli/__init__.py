"""The command line (layer L6): ``lance-semantic`` and its thin commands.

The front door binds nothing: the entry point is ``lance_semantic.cli.main:main``, and a name
bound here would shadow the submodule of the same name (``python -m lance_semantic.cli.main``
and ``from lance_semantic.cli import main`` must both reach the module).
"""

__all__: list[str] = []
