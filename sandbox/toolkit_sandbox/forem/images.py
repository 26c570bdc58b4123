"""Placeholder images: every profile, cover and social image the serializers link to is
served by the sandbox itself, so pages built from its data work offline."""

from __future__ import annotations

import base64

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

# A 1x1 transparent PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


async def image(request: Request) -> Response:
    return Response(
        PIXEL, media_type="image/png", headers={"Cache-Control": "public, max-age=86400"}
    )


routes = [Route("/images/{path:path}", image, methods=["GET"])]
