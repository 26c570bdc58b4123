"""`make demo` shows both outcomes of the licence gate: a premium build for the customer
the sandbox licenses, and the refusal for an unlicensed one, which writes nothing."""

from __future__ import annotations


def test_the_demo_makes_one_premium_build_and_shows_one_refused(demo_run):
    # The session's demo (tests/conftest.py), on a copy of this repository that brings
    # the premium overlay of templates/ along.
    project, result = demo_run.project, demo_run
    assert result.exit_code == 0, result.output
    workdir = project.root / ".toolkit" / "demo"
    premium, public = workdir / "site-premium", workdir / "site"
    assert (
        "premium build allowed (customer acme.example, licence ACTIVE): " in result.output
        and f"in {premium}" in result.output
    )
    assert (
        "premium build refused: customer initech.example licence is UNLICENSED: nothing was written"
    ) in result.output
    page = (premium / "premium-example" / "index.html").read_text()
    assert "A premium post" in page and "Premium edition, for licensed readers." in page
    assert "Premium edition" in (premium / "getting-started" / "index.html").read_text()
    assert not (public / "premium-example").exists()
    for path in public.rglob("*.html"):
        text = path.read_text()
        assert "A premium post" not in text and "Premium edition" not in text, path
    assert not (project.root / "site-premium").exists()  # only the demo's copy was built
