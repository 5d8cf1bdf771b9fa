"""The house: the project's rooms, the import arrows between them, circles and arrows that run back up.

Read from the code with `ast` (nothing is imported, so it measures any checkout, before or after a change):

    python -m tools.house            # this checkout
    python -m tools.house /path/to/checkout --list

Definitions (docs/layers.md says why):

- **module**: every `.py` file of the project's packages, outside `tests/`, `migrations/` and `tools/`.
- **room**: a package folder (`chatbot/`, `chatbot/agent/`, `chatbot/agent/offline/`...); a module belongs to
  the folder it sits in. An **arrow** is an ordered pair of rooms where a module of the first imports a module
  of the second.
- **import**: `import x` or `from x import y` anywhere in a module: at module level, inside a function, or under
  `if TYPE_CHECKING:` (a type named from another module is a dependency on it too). `from pkg import name`
  counts as an import of `pkg.name` when that is a module of the project, of `pkg` otherwise.
- **circle**: a strongly connected component of two or more modules in the graph of every import (those inside
  functions too: an import moved into a function to dodge a circle still closes it).
- **layers**, from the bottom: `plumbing` < `bookings`, `crm` < `chatbot` < `adminpanel` < `quality` <
  `config` (the composition root: it may import anything). A module may import its own layer and those
  below; an import of a higher layer **runs back up**.
- **imports inside functions**: counted outside tests; those of a project module are listed (each closes a
  circle or names a reason of its own), those of a heavy third-party library are the documented lazy ones
  (tests/test_startup.py).
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# tools/ (this reader) is tooling, not a room of the house.
SKIPPED_DIRS = {
    "tests",
    "tools",
    "migrations",
    ".venv",
    "node_modules",
    "static",
    "templates",
    "locale",
    "docs",
    "__pycache__",
}

# The layers, bottom first; a module's layer is that of its longest matching prefix.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("plumbing",),
    ("bookings", "crm"),
    ("chatbot",),
    ("adminpanel",),
    ("quality",),
    ("config",),
)
LAYER_NAMES = ("plumbing", "bookings/crm", "chatbot", "adminpanel", "quality", "config")


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    in_function: bool


@dataclass
class House:
    modules: dict[str, Path] = field(default_factory=dict)
    imports: list[Import] = field(default_factory=list)
    third_party_in_functions: list[Import] = field(default_factory=list)

    def room(self, module: str) -> str:
        """The folder a module sits in (a package's `__init__` is the package's own room)."""
        path = self.modules[module]
        return path.parent.as_posix() + "/"

    @property
    def rooms(self) -> set[str]:
        return {self.room(module) for module in self.modules}

    @property
    def arrows(self) -> set[tuple[str, str]]:
        return {
            (self.room(i.source), self.room(i.target))
            for i in self.imports
            if self.room(i.source) != self.room(i.target)
        }

    @property
    def edges(self) -> dict[str, set[str]]:
        graph: dict[str, set[str]] = {module: set() for module in self.modules}
        for i in self.imports:
            if i.source != i.target:
                graph[i.source].add(i.target)
        return graph

    def reachable(self, start: str) -> set[str]:
        """Every module `start` imports, directly or through others."""
        graph, seen, todo = self.edges, set(), [start]
        while todo:
            for target in graph[todo.pop()] - seen:
                seen.add(target)
                todo.append(target)
        return seen

    def circles(self) -> list[list[str]]:
        return [sorted(component) for component in strongly_connected(self.edges) if len(component) > 1]

    def back_up(self) -> list[Import]:
        """One per (module, module) pair: an import of a higher layer than the importer's."""
        seen: dict[tuple[str, str], Import] = {}
        for i in self.imports:
            if layer_of(i.target) > layer_of(i.source):
                seen.setdefault((i.source, i.target), i)
        return sorted(seen.values(), key=lambda i: (i.source, i.target))

    def project_imports_in_functions(self) -> list[Import]:
        return [i for i in self.imports if i.in_function]


def layer_of(module: str) -> int:
    top = module.split(".")[0]
    for index, names in enumerate(LAYERS):
        if top in names:
            return index
    return len(LAYERS) - 1


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_files(root: Path) -> list[Path]:
    tops = [
        child
        for child in sorted(root.iterdir())
        if child.is_dir() and child.name not in SKIPPED_DIRS and (child / "__init__.py").exists()
    ]
    files = []
    for top in tops:
        files.extend(
            path
            for path in sorted(top.rglob("*.py"))
            if not SKIPPED_DIRS.intersection(path.relative_to(root).parts[:-1])
        )
    return files


def imported_names(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The dotted names an import statement loads, candidate submodules (`from a import b` -> `a.b`) included."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    assert isinstance(node, ast.ImportFrom)
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, base] if base else package)
    return [f"{base}.{alias.name}" for alias in node.names] + [base]


def walk(tree: ast.AST):
    """Every import node with whether it sits inside a function."""
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, in_function = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, in_function
        inside = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        stack.extend((child, inside) for child in ast.iter_child_nodes(node))


def resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest project module a dotted name starts with."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def read_house(root: Path = ROOT) -> House:
    house = House()
    for path in project_files(root):
        house.modules[module_name(root, path)] = path.relative_to(root)
    for module, path in house.modules.items():
        tree = ast.parse((root / path).read_text(encoding="utf-8"), filename=str(path))
        for node, in_function in walk(tree):
            names = imported_names(node, module, path.name == "__init__.py")
            targets = {resolve(name, house.modules) for name in names}
            # `from a import b`: a.b when b is a module, else a (the base is the last candidate).
            found = {target for target in targets if target}
            if isinstance(node, ast.ImportFrom) and len(found) > 1:
                found.discard(resolve(names[-1], house.modules))
            for target in sorted(found):
                house.imports.append(Import(module, target, node.lineno, in_function))
            if not found and in_function:
                house.third_party_in_functions.append(Import(module, names[0], node.lineno, True))
    return house


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[set[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                components.append(component)
    return components


def report(house: House, listing: bool) -> str:
    circles = house.circles()
    back_up = house.back_up()
    in_functions = house.project_imports_in_functions()
    lines = [
        f"modules: {len(house.modules)}",
        f"rooms: {len(house.rooms)}",
        f"arrows between rooms: {len(house.arrows)}",
        f"import circles: {len(circles)}",
        *(f"  - {' <-> '.join(circle)}" for circle in circles),
        f"imports inside functions (outside tests): {len(in_functions) + len(house.third_party_in_functions)}"
        f" ({len(in_functions)} of project modules, {len(house.third_party_in_functions)} of libraries)",
        f"arrows back up (layers {' < '.join(LAYER_NAMES)}): {len(back_up)}",
        *(
            f"  - {i.source} -> {i.target} ({LAYER_NAMES[layer_of(i.source)]} -> {LAYER_NAMES[layer_of(i.target)]})"
            for i in back_up
        ),
    ]
    if listing:
        lines.append("rooms:")
        lines.extend(f"  {room}" for room in sorted(house.rooms))
        lines.append("imports of project modules inside functions:")
        lines.extend(f"  {house.modules[i.source]}:{i.line} -> {i.target}" for i in in_functions)
        lines.append("imports of libraries inside functions:")
        lines.extend(f"  {house.modules[i.source]}:{i.line} -> {i.target}" for i in house.third_party_in_functions)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", type=Path, default=ROOT)
    parser.add_argument("--list", action="store_true", help="list the rooms and every import inside a function")
    args = parser.parse_args(argv)
    print(report(read_house(args.root.resolve()), args.list))
    return 0


if __name__ == "__main__":
    sys.exit(main())
