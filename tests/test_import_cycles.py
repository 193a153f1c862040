"""No module of chat/ or storage/ can be reached again from the modules it imports.

import-linter's ``acyclic-chat-storage`` contract (importlinter-typed.toml) checks cycles
between the packages of each level and lets the job worker's program,
``chat/jobs/__main__.py``, point up at the composition root it runs. This test checks the
modules themselves, with no exception: every import counts, under ``if TYPE_CHECKING:`` or
inside a function as much as at the top of a file.
"""

from __future__ import annotations

import grimp

ROOMS = ("chat", "storage")


def test_no_import_cycle_among_the_modules_of_chat_and_storage() -> None:
    graph = grimp.build_graph("chat", "storage", "krendzu", "render", "engines",
                              exclude_type_checking_imports=False, cache_dir=None)
    ours = sorted(m for m in graph.modules if m.split(".")[0] in ROOMS)
    cycles = []
    for importer in ours:
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            if imported.split(".")[0] not in ROOMS:
                continue
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                cycles.append(" -> ".join((importer, *back)))
    assert len(ours) > 80, "the graph holds the project's modules"
    assert not cycles, "\n".join(cycles)
