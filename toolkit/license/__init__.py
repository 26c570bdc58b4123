"""The licence a premium build needs: the marketplace licensing API's client and records,
where `license notifications` stopped, and the premium gate.

- `records`: a customer's licence, a user's licence, a notification (no HTTP library);
- `client`: the licensing API's client over `toolkit.clients.base`, and `license_client`,
  the one place that turns a `Config` into one;
- `cursor`: the position `license notifications` saves between runs;
- `status`: what `license status` and `license notifications` read from the service;
- `gate`: the premium gate of `build --premium` and `watch --premium`, and the refusals
  `license status` words the same way.

Importing the package costs nothing: the client (and httpx) is imported when a licence is
asked for.
"""
