"""The command layer: commands that drive tasks, the engine and the libraries (``bordia score``, ``bordia
sweep``, ...), above :mod:`genderscope.tasks`.

Libraries (:mod:`genderscope.bordia`, :mod:`genderscope.stats`, ...), tasks, backends and the core never
import this package; the CLI and the demo do. A command that writes a run log declares a
:class:`genderscope.core.command.Command` and has one line in :data:`genderscope.catalogue.COMMANDS`.
"""
