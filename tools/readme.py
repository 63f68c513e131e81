"""Write README.md from nbs/index.ipynb (Quarto, which `nbdev-readme` needs, cannot be installed here).

Markdown cells are copied, code cells become ```python blocks, and their text outputs (streams and plain
results, as saved by `nbdev-test --save`) follow as plain ``` blocks. A `%%writefile NAME` cell becomes a ```python NAME block
(a file the reader writes), a cell of `!command` lines a ```bash block (commands the reader runs; tests/test_readme.py runs them
and compares their output), and nbdev directives (`#|eval: false`) are left out. Run from the repository root:
`python tools/readme.py` (writes README.md) or `python tools/readme.py --check` (exits 1 if README.md is stale).
"""
import json, sys
from pathlib import Path

def _text(x): return ''.join(x) if isinstance(x, list) else x

def render(nb_path='nbs/index.ipynb'):
    nb = json.loads(Path(nb_path).read_text())
    parts = []
    for cell in nb['cells']:
        src = _text(cell['source']).strip()
        if cell['cell_type'] == 'markdown':
            parts.append(src)
        elif cell['cell_type'] == 'code' and src and not src.startswith('#|hide'):
            src = '\n'.join(l for l in src.splitlines() if not l.startswith('#|')).strip() # nbdev's directives (`#|eval: false`) are not shown
            first, _, body = src.partition('\n')
            if first.startswith('%%writefile '): parts.append(f"```python {first.split()[1]}\n{body}\n```") # a file the reader writes
            elif src.startswith('!'): parts.append("```bash\n" + '\n'.join(l[1:] for l in src.splitlines()) + "\n```") # a shell command
            else: parts.append(f"```python\n{src}\n```")
            outs = []
            for o in cell.get('outputs', []):
                if o.get('output_type') == 'stream' and o.get('name') == 'stdout': outs.append(_text(o['text']))
                elif 'text/plain' in o.get('data', {}): outs.append(_text(o['data']['text/plain']) + '\n')
            if outs: parts.append("```\n" + ''.join(outs).rstrip('\n') + "\n```")
    return "<!-- Written by tools/readme.py from nbs/index.ipynb: edit the notebook, not this file. -->\n\n" + '\n\n'.join(parts) + '\n'

if __name__ == '__main__':
    text = render()
    if '--check' in sys.argv:
        stale = Path('README.md').read_text() != text
        if stale: print("README.md is stale: run `python tools/readme.py` after editing nbs/index.ipynb")
        sys.exit(int(stale))
    Path('README.md').write_text(text)
