"""The edge's User-Agent rule in front of interface A (opt-in: POST
/__sandbox/forem/user-agent-check), on Forem's paths only.

dev.to refuses some User-Agents before Rails sees the request, in a Fastly VCL snippet
kept in Forem's repository: forem/forem config/fastly/snippets/bad_bot_detection.vcl
(introduced by https://github.com/forem/forem/pull/7654; the missing-header rule by
https://github.com/forem/forem/pull/15817). The conditions are ported here as they are:
case-sensitive regular expressions searched anywhere in the value (Fastly's `~`), a few
anchored, and exact values (`==`). A refused request gets `error 703`, turned into a
403 with the reason phrase `Forbidden Bots` and an empty body (an ASGI application
cannot set a reason phrase, so the sandbox's 403 carries the standard one).

Nothing else is refused: curl, Wget, python-requests, python-httpx, aiohttp
(`Python/3.x aiohttp/3.x`), Go (`Go-http-client/1.1`: `http client` needs a space),
okhttp and node-fetch match no condition. A header value is trimmed by the HTTP parser,
so an agent of spaces only is an empty one, as at the edge.
"""

from __future__ import annotations

import re

from starlette.responses import Response
from starlette.types import Scope

from toolkit_sandbox.forem.http import NAME
from toolkit_sandbox.forem.state import ForemState
from toolkit_sandbox.state import SandboxState

# `req.http.user-agent ~ "..."`: searched anywhere, case-sensitive.
_SEARCHED = (
    r"^$",  # an empty User-Agent ("Disallow empty User-Agent")
    # Java's HttpURLConnection (`Java/17.0.2`) and java.net.http (`Java-http-client/17`);
    # Apache Jakarta Commons HttpClient.
    r"^Java",
    r"^Jakarta",
    r"IDBot",
    r"id-search",
    r"User-Agent",  # a client that put the header name into its value
    r"compatible ;",
    r"ConveraCrawler",
    r"^Mozilla$",  # exactly "Mozilla": a browser never sends only that
    r"libwww",  # Perl's LWP (`libwww-perl/6.x`)
    r"lwp-trivial",
    # Python's urllib (`Python-urllib/3.12`) and bare urllib3 (`python-urllib3/2.x`);
    # seen refused on dev.to: https://github.com/norrietaylor/distillery/pull/385
    r"urllib",
    r"GT:WWW",
    r"Snoopy",
    r"MFC_Tear_Sample",
    r"HTTP::Lite",
    r"PHPCrawl",
    r"URI::Fetch",
    r"Zend_Http_Client",
    r"http client",  # with a space: `Go-http-client/1.1` does not match
    r"PECL::HTTP",
    r"panscient.com",
    r"IBM EVV",
    r"Bork-edition",
    r"Fetch API Request",
    r"PleaseCrawl",
    r"[A-Z][a-z]{3,} [a-z]{4,} [a-z]{4,}",  # a capitalised word, then two lower-case ones
    r"layeredtech.com",
    r"WEP Search",
    r"Wells Search II",
    r"Missigua Locator",
    r"ISC Systems iRc Search 2.1",
    r"Microsoft URL Control",
    r"Indy Library",
    r"Fuzz Faster",
    r"AhrefsBot",  # "an order of magnitude more traffic ... than any other search crawler"
    r"bytespider",  # "some unnecessary AI bots"
    r"amazonbot",
)
_SEARCH = re.compile("|".join(f"(?:{pattern})" for pattern in _SEARCHED))
# `req.http.user-agent == "..."`: old bots and e-mail harvesters, exact values.
_EXACT = frozenset(
    {
        "8484 Boston Project v 1.0",
        "Atomic_Email_Hunter/4.0",
        "atSpider/1.0",
        "autoemailspider",
        "China Local Browse 2.6",
        "ContactBot/0.2",
        "ContentSmartz",
        "DataCha0s/2.0",
        "DBrowse 1.4b",
        "DBrowse 1.4d",
        "Demo Bot DOT 16b",
        "Demo Bot Z 16b",
        "DSurf15a 01",
        "DSurf15a 71",
        "DSurf15a 81",
        "DSurf15a VA",
        "EBrowse 1.4b",
        "Educate Search VxB",
        "EmailSiphon",
        "EmailWolf 1.00",
        "ESurf15a 15",
        "ExtractorPro",
        "Franklin Locator 1.8",
        "FSurf15a 01",
        "Full Web Bot 0416B",
        "Full Web Bot 0516B",
        "Full Web Bot 2816B",
        "Guestbook Auto Submitter",
        "Industry Program 1.0.x",
        "ISC Systems iRc Search 2.1",
        "IUPUI Research Bot v 1.9a",
        "LARBIN-EXPERIMENTAL (efp@gmx.net)",
        "LetsCrawl.com/1.0 +http://letscrawl.com/",
        "Lincoln State Web Browser",
        "LMQueueBot/0.2",
        "LWP::Simple/5.803",
        "Mac Finder 1.0.xx",
        "MFC Foundation Class Library 4.0",
        "Microsoft URL Control - 6.00.8xxx",
        "Missauga Locate 1.0.0",
        "Missigua Locator 1.9",
        "Missouri College Browse",
        "Mizzu Labs 2.2",
        "Mo College 1.9",
        "Mozilla/2.0 (compatible; NEWT ActiveX; Win32)",
        "Mozilla/3.0 (compatible; Indy Library)",
        "Mozilla/4.0 (compatible; Advanced Email Extractor v2.xx)",
        "Mozilla/4.0 (compatible; Iplexx Spider/1.0 http://www.iplexx.at)",
        "Mozilla/4.0 (compatible; MSIE 5.0; Windows NT; DigExt; DTS Agent",
        "Mozilla/4.0 efp@gmx.net",
        "Mozilla/5.0 (Version: xxxx Type:xx)",
        "MVAClient",
        "NameOfAgent (CMS Spider)",
        "NASA Search 1.0",
        "Nsauditor/1.x",
        "PBrowse 1.4b",
        "PEval 1.4b",
        "Poirot",
        "Port Huron Labs",
        "Production Bot 0116B",
        "Production Bot 2016B",
        "Production Bot DOT 3016B",
        "Program Shareware 1.0.2",
        "PSurf15a 11",
        "PSurf15a 51",
        "PSurf15a VA",
        "psycheclone",
        "RSurf15a 41",
        "RSurf15a 51",
        "RSurf15a 81",
        "searchbot admin@google.com",
        "ShablastBot 1.0",
        "snap.com beta crawler v0",
        "Snapbot/1.0",
        "sogou develop spider",
        "Sogou Orion spider/3.0(+http://www.sogou.com/docs/help/webmasters.htm#07)",
        "sogou spider",
        "Sogou web spider/3.0(+http://www.sogou.com/docs/help/webmasters.htm#07)",
        "sohu agent",
        "SSurf15a 11",
        "TSurf15a 11",
        "Under the Rainbow 2.2",
        "User-Agent: Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)",
        "VadixBot",
        "WebVulnCrawl.blogspot.com/1.0 libwww-perl/5.803",
        "Wells Search II",
        "WEP Search 00",
    }
)


def user_agent(scope: Scope) -> str | None:
    headers: list[tuple[bytes, bytes]] = scope["headers"]
    for name, value in headers:
        if name == b"user-agent":
            return value.decode("latin-1")
    return None


def refused(agent: str | None, path: str) -> bool:
    """Whether dev.to's edge refuses a request with this User-Agent (None: no header)."""
    if agent is None:  # `!~ "."`: no header at all ("Disallow null User-Agent", PR 15817)
        return True
    if _SEARCH.search(agent) or agent in _EXACT:
        return True
    # A Spoofed agent: Firefox 62 came out in Sep 2018, the rule was added in Dec 2021.
    if "Firefox/62.0" in agent and "Win64" in agent:
        return True
    # Ruby's Net::HTTP default, "unless they're interacting with the API"
    # (https://github.com/forem/forem/pull/15942: feeds fetched as "Ruby" got a 403).
    return agent == "Ruby" and not path.startswith("/api")


def guard(scope: Scope, state: SandboxState) -> Response | None:
    """The edge's 403 with an empty body, when the rule is switched on. The guard is
    interface A's, so it never sees another interface's paths (`/api/v1/...` included)."""
    forem: ForemState = state.of(NAME)
    if forem.user_agent_check and refused(user_agent(scope), scope["path"]):
        return Response(status_code=403)
    return None
