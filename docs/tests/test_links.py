"""Internal links of the built site: every relative href/src points at a file of the
site, and every #fragment at an id of its page (there is no network, so external links
are not followed)."""
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

ATTR = re.compile(r'\b(?:href|src)="([^"]*)"')
ID = re.compile(r'\bid="([^"]+)"')


def test_internal_links_resolve(site):
    ids = {}
    broken = []
    # the site's pages (templates the theme copies into _static are not pages)
    pages = sorted(p for p in site.rglob("*.html")
                   if p.relative_to(site).parts[0] not in ("_static", "_sources"))
    assert len(pages) > 50
    for page in pages:
        text = page.read_text(errors="replace")
        for link in ATTR.findall(text):
            parts = urlsplit(link)
            if parts.scheme or link.startswith(("//", "mailto:", "javascript:", "data:")):
                continue
            path = unquote(parts.path)
            target = page if not path else (page.parent / path).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {link}")
                continue
            frag = unquote(parts.fragment)
            if frag and target.suffix == ".html":
                if target not in ids:
                    ids[target] = set(ID.findall(target.read_text(errors="replace")))
                if frag not in ids[target]:
                    broken.append(f"{page.relative_to(site)}: {link} (no id {frag!r})")
    assert not broken, f"{len(broken)} broken internal links:\n" + "\n".join(broken[:50])
