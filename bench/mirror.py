"""Mirror benchmark: 200 published articles with comment threads, in the sandbox.

Printed: HTTP requests and wall time of a first `toolkit mirror comments` (every thread
fetched), of a second one with nothing changed (the list read only), and of one after a
single new comment (the list read and that one thread).
"""

from __future__ import annotations

import sys

from bench.common import WORK, SandboxProcess, project, run_cli

ARTICLES = 200
CONFIG = """[site]
title = "Mirror benchmark"
url = "https://mirror.example.com"
"""


def seed(sandbox: SandboxProcess) -> list[int]:
    articles = [
        {
            "title": f"Commented article {i}",
            "published": True,
            "tags": ["bench"],
            "body_markdown": f"Article {i} of the mirror benchmark.\n",
        }
        for i in range(ARTICLES)
    ]
    ids = sandbox.control("POST", "/articles", {"articles": articles})["ids"]
    for article_id in ids:
        root = sandbox.control(
            "POST", "/comments", {"article_id": article_id, "body_markdown": "A first remark."}
        )
        reply = sandbox.control(
            "POST",
            "/comments",
            {
                "article_id": article_id,
                "parent_id_code": root["id_code"],
                "body_markdown": "A reply.",
            },
        )
        sandbox.control(
            "POST",
            "/comments",
            {
                "article_id": article_id,
                "parent_id_code": reply["id_code"],
                "body_markdown": "A reply to the reply.",
            },
        )
    return ids


def measured(sandbox: SandboxProcess, root, label: str) -> None:
    sandbox.control("POST", "/stats/reset")
    run = run_cli(["mirror", "comments"], root, sandbox.env())
    if run.exit_code != 0:
        sys.exit(f"mirror failed:\n{run.output}")
    requests = sandbox.api_requests()
    detail = ", ".join(f"{key}: {count}" for key, count in sorted(requests.items()))
    print(f"  {label}: {sum(requests.values())} requests ({detail}), {run.seconds:.2f} s")


def main() -> None:
    with SandboxProcess("--no-seed") as sandbox:
        ids = seed(sandbox)
        root = project(WORK / "mirror", CONFIG)
        print(f"mirror of {ARTICLES} articles with 3 nested comments each:")
        measured(sandbox, root, "first run")
        measured(sandbox, root, "no-change run")
        sandbox.control("POST", "/comments", {"article_id": ids[42], "body_markdown": "New!"})
        measured(sandbox, root, "after one new comment")


if __name__ == "__main__":
    main()
