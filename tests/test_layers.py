"Imports point down: the package's import graph (every import, those inside functions included) has no circle, and a module imports only modules of lower notebook numbers."
import ast, re
from pathlib import Path
import pytest

PKG = Path(__file__).resolve().parents[1]/'fastai_paranoid'
NOT_NUMBERED = {'all', '__init__', '_modidx'} # hand-written entry points and nbdev's index: they may import anything

def notebook_number(path:Path):
    "`(number, suffix)` of the notebook the module is exported from (`# %% ../nbs/24_collect.ipynb` -> (24, ''), a `21a_x` -> (21, 'a')), or None"
    m = re.search(r'^# %% \.\./nbs/(\d+)([a-z]*)_', path.read_text(), re.M)
    return (int(m.group(1)), m.group(2)) if m else None

def imported_modules(path:Path, modules:set)->set:
    "The modules of this package that `path` imports, anywhere in it: `from .x import`, `from . import x`, `import fastai_paranoid.x`, `from fastai_paranoid.x import`, `from fastai_paranoid import x`"
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1: names = [node.module] if node.module else [a.name for a in node.names]
            elif node.level == 0 and node.module == 'fastai_paranoid': names = [a.name for a in node.names]
            elif node.level == 0 and node.module and node.module.startswith('fastai_paranoid.'): names = [node.module.split('.', 1)[1]]
            else: names = []
        elif isinstance(node, ast.Import):
            names = [a.name.split('.', 1)[1] for a in node.names if a.name.startswith('fastai_paranoid.')]
        else: names = []
        found.update(n.split('.')[0] for n in names)
    return found & modules - {path.stem}

def import_graph()->dict:
    modules = {p.stem for p in PKG.glob('*.py')}
    return {m: imported_modules(PKG/f'{m}.py', modules) for m in sorted(modules)}

def circles(graph:dict)->list:
    "Every import circle, each as the list of its modules from its smallest name round (strongly connected components of 2+ modules, or a module importing itself)"
    index, low, stack, on_stack, res = {}, {}, [], set(), []
    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v); on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack: low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop(); on_stack.discard(w); component.append(w)
                if w == v: break
            if len(component) > 1 or v in graph[v]: res.append(sorted(component))
    for v in sorted(graph):
        if v not in index: visit(v)
    return sorted(res)

def upward_imports(graph:dict)->list:
    "`'importer (NN) -> imported (MM)'` for each import of a module whose notebook number is not lower than the importer's"
    numbers = {m: notebook_number(PKG/f'{m}.py') for m in graph if m not in NOT_NUMBERED}
    label = lambda m: f"{m} ({numbers[m][0]:02d}{numbers[m][1]})"
    return sorted(f"{label(m)} -> {label(i)}"
                  for m, imported in graph.items() if m not in NOT_NUMBERED
                  for i in imported if i not in NOT_NUMBERED and numbers[i] >= numbers[m])

def test_the_walker_sees_every_kind_of_import(tmp_path):
    "Relative, absolute, `from . import x` and imports inside functions are all edges; a name that is no module of ours is not"
    (tmp_path/'a.py').write_text("from .b import x\nfrom . import c\ndef f():\n    import fastai_paranoid.d\n    from fastai_paranoid.e import y\n"
                                 "    from fastai_paranoid import g\nimport fastai\nfrom .nothing import z\n")
    assert imported_modules(tmp_path/'a.py', set('abcdefg')) == set('bcdeg')

def test_circles_and_upward_imports_are_found():
    "The checks of this file on a small graph with one circle and one arrow up"
    assert circles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}) == [['a', 'b', 'c']]
    assert circles({'a': {'b'}, 'b': set()}) == []

def test_every_numbered_module_has_its_own_number():
    graph = import_graph()
    numbers = {m: notebook_number(PKG/f'{m}.py') for m in graph if m not in NOT_NUMBERED}
    assert [m for m, n in numbers.items() if n is None] == []
    twice = {n: sorted(m for m in numbers if numbers[m] == n) for n in set(numbers.values())}
    assert {n: ms for n, ms in twice.items() if len(ms) > 1} == {}

def test_no_import_circle():
    assert circles(import_graph()) == []

def test_imports_point_down_the_notebook_order():
    "A module imports only modules exported from notebooks of lower numbers: the notebooks read top to bottom"
    assert upward_imports(import_graph()) == []

def test_the_readme_table_is_the_layout():
    "CONTRIBUTING.md's notebook table (the layout, moved there from the README): every numbered notebook once, in order, each with its module and what that module imports"
    nbs = PKG.parent/'nbs'
    text = (PKG.parent/'CONTRIBUTING.md').read_text()
    rows = re.findall(r'^\| `(\w+)` \| `(\w+)` \| .* \| (.*) \|$', text, re.M)
    graph = import_graph()
    assert [r[0] for r in rows] == sorted((p.stem for p in nbs.glob('[0-9]*.ipynb')), key=lambda s: (int(re.match(r'\d+', s).group()), s))
    assert {m: set(re.findall(r'`(\w+)`', imports)) for _, m, imports in rows} == {m: graph[m] for m in graph if m not in NOT_NUMBERED}
    for nb, m, _ in rows: assert f'# %% ../nbs/{nb}.ipynb' in (PKG/f'{m}.py').read_text(), (nb, m)

def test_every_notebook_cell_has_a_stable_id():
    "nbdev-export writes each cell's id into the module; a cell without one gets a fresh random id at every export, so CI's `git status` check after `nbdev-export` fails on a clean clone"
    import json
    nbs = PKG.parent/'nbs'
    missing = {p.name: n for p in nbs.glob('*.ipynb')
               if (n := sum('id' not in c for c in json.loads(p.read_text())['cells']))}
    assert not missing, f"cells without an id (give each a fixed one): {missing}"
