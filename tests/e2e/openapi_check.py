"""Checks one HTTP answer of the server against docs/openapi.yaml.

    import openapi_check
    openapi_check.check("GET", "/v1/odds?ids=1,2", 200, headers, body_bytes)

finds the operation for the concrete path (path templates matched, the
query ignored), the response documented for the status, checks the headers
that response marks required (and the value of every documented header
present against its schema), the media type, and validates the body
(gunzipped when Content-Encoding says gzip) against the response's JSON
schema with $ref resolved within the document (JSON Schema 2020-12, the
dialect of OpenAPI 3.1). Any mismatch, an undocumented route, method or
status raises AssertionError naming the route, the status and the JSON
pointer of the failing part.

Answers that belong to no route (the CORS preflight, an unknown path, a
method the path does not take, and the protocol errors for those) are read
from the document's root extension `x-oddsrelay-any-path`; the stream paths
(the WebSockets, `x-websocket: true`, and the Server-Sent Events of
`x-sse: true`) answer OPTIONS with 405 instead of the preflight.

An endless body (`text/event-stream`: /pt-sse's 200) is checked from what
was read of it, usually nothing but the head: an empty body is accepted
there, whatever its schema.

Needs Debian's python3-yaml and python3-jsonschema (scripts/install-deps.sh).
"""
import gzip
import json
import os
import re
from urllib.parse import urlsplit

import jsonschema
import yaml

DOC_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "openapi.yaml")
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_cache = {}


def load(path=DOC_PATH):
    """The parsed document (cached per path)."""
    path = os.path.abspath(path)
    if path not in _cache:
        with open(path) as f:
            _cache[path] = Contract(yaml.safe_load(f))
    return _cache[path]


def check(method, path, status, headers, body_bytes, doc=DOC_PATH):
    """Raises AssertionError when the answer does not match the document."""
    load(doc).check(method, path, status, headers, body_bytes)


def _pointer(parts):
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts) if parts else ""


def _header_map(headers):
    """Lower-cased name -> value from a dict, an email.message.Message /
    http.client.HTTPMessage, or a list of (name, value) pairs."""
    if headers is None:
        return {}
    items = headers.items() if hasattr(headers, "items") else headers
    return {str(k).lower(): str(v).strip() for k, v in items}


class Contract:
    def __init__(self, doc):
        self.doc = doc
        self.routes = []  # (regex, template, path item)
        for template, item in doc.get("paths", {}).items():
            rx = "^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template)) + "$"
            self.routes.append((re.compile(rx), template, item))
        # Concrete templates before templated ones.
        self.routes.sort(key=lambda r: r[1].count("{"))
        self._validators = {}
        for bound in _bounds(doc):
            assert bound <= 2 * SAMPLE, f"openapi: a bound of {bound} entries: raise SAMPLE past half of it"

    # -- lookups
    def resolve(self, node):
        """Follows a $ref (local, possibly chained) to what it names."""
        seen = set()
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if not ref.startswith("#/") or ref in seen:
                raise AssertionError(f"openapi: unresolvable $ref {ref}")
            seen.add(ref)
            node = self.doc
            for part in ref[2:].split("/"):
                node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def response_for(self, method, path, status):
        """(route label, response object) for the answer, or AssertionError."""
        method = method.lower()
        path = urlsplit(path).path or "/"
        any_path = self.doc.get("x-oddsrelay-any-path", {})
        status = str(status)
        for rx, template, item in self.routes:
            if not rx.match(path):
                continue
            op = item.get(method)
            label = f"{method.upper()} {template}"
            if op is None:
                if method == "options" and not (item.get("x-websocket") or item.get("x-sse")):
                    return label + " (preflight)", self._from(any_path.get("options", {}), status, label)
                return label + " (method not allowed)", self._from(any_path.get("method-not-allowed", {}), status,
                                                                     label)
            responses = op.get("responses", {})
            if status in responses:
                return label, self.resolve(responses[status])
            wildcard = status[0] + "XX"
            if wildcard in responses:
                return label, self.resolve(responses[wildcard])
            if "default" in responses:
                return label, self.resolve(responses["default"])
            raise AssertionError(f"openapi: {label} -> {status}: status not documented "
                                 f"(documented: {', '.join(sorted(responses))})")
        label = f"{method.upper()} {path}"
        if method == "options":
            return label + " (preflight, unknown path)", self._from(any_path.get("options", {}), status, label)
        return label + " (unknown path)", self._from(any_path.get("unknown-path", {}), status, label)

    def _from(self, responses, status, label):
        # The protocol errors come before the route: any path, any method.
        responses = {**self.doc.get("x-oddsrelay-any-path", {}).get("protocol-errors", {}), **responses}
        if status not in responses:
            raise AssertionError(f"openapi: {label} -> {status}: not a documented route or status "
                                 f"(documented here: {', '.join(sorted(responses)) or 'none'})")
        return self.resolve(responses[status])

    def validator(self, schema):
        """A 2020-12 validator of one schema of the document. Its local $refs
        ("#/components/schemas/...") name the document's root: the schema is
        validated as the root of a copy that carries the document's
        components, which resolves them with any jsonschema version (the
        RefResolver of Debian's 4.10 as the registry of 4.18+)."""
        entry = self._validators.get(id(schema))
        if entry is None:
            root = dict(schema)
            if "components" in self.doc:
                root["components"] = self.doc["components"]
            entry = (schema, jsonschema.Draft202012Validator(root, format_checker=None))
            self._validators[id(schema)] = entry
        return entry[1]

    # -- the check
    def check(self, method, path, status, headers, body_bytes):
        label, response = self.response_for(method, path, status)
        where = f"{label} -> {status}"
        hdrs = _header_map(headers)
        for name, spec in (response.get("headers") or {}).items():
            spec = self.resolve(spec)
            value = hdrs.get(name.lower())
            if value is None:
                if spec.get("required"):
                    raise AssertionError(f"openapi: {where}: required header {name} is missing "
                                         f"(headers: {', '.join(sorted(hdrs))})")
                continue
            schema = spec.get("schema")
            if schema:
                self._validate(where, f"header {name}", _header_value(value, schema), schema)
        body = body_bytes or b""
        if "gzip" in hdrs.get("content-encoding", "").lower() and body:
            body = gzip.decompress(body)
        content = response.get("content")
        if not content:
            if body and method.upper() != "HEAD":
                raise AssertionError(f"openapi: {where}: documented without a body, got {len(body)} bytes: "
                                     f"{body[:200]!r}")
            return
        if method.upper() == "HEAD":
            return
        ctype = hdrs.get("content-type", "")
        media = _media_type(ctype)
        match = [k for k in content if _media_type(k) == media]
        if not match:
            raise AssertionError(f"openapi: {where}: Content-Type {ctype!r} is not documented "
                                 f"(documented: {', '.join(content)})")
        schema = content[match[0]].get("schema")
        if schema is None or (media == "text/event-stream" and not body):
            return
        if media == "application/json" or media.endswith("+json"):
            try:
                instance = json.loads(body)
            except ValueError as e:
                raise AssertionError(f"openapi: {where}: body is not JSON ({e}): {body[:200]!r}")
        else:
            instance = body.decode("utf-8", "replace")
        self._validate(where, "body", _sampled(instance), schema)

    def _validate(self, where, what, instance, schema):
        v = self.validator(schema)
        errors = sorted(v.iter_errors(instance), key=lambda e: (len(e.path), list(map(str, e.path))))
        if not errors:
            return
        # The deepest error says most: the field that is wrong, not the
        # anyOf that failed because of it.
        e = max(errors, key=_depth)
        leaf = _deepest(e)
        at = _pointer(leaf.absolute_path)
        schema_at = _pointer(leaf.absolute_schema_path)
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise AssertionError(f"openapi: {where}: {what} at {at or '/'} (JSON pointer): {leaf.message} "
                             f"[schema {schema_at}]{more}")


# A map or list of more than 2 * SAMPLE entries (a listing of 50,000
# events) is checked by its first and last SAMPLE: each entry is checked
# against the same schema, so the rest adds seconds of jsonschema and no
# finding, and no bound in docs/openapi.yaml is above 2 * SAMPLE, so a
# sample breaks a bound exactly when the whole does.
SAMPLE = 100


def _bounds(v):
    if isinstance(v, dict):
        for k, x in v.items():
            if k in ("minItems", "maxItems", "minProperties", "maxProperties") and isinstance(x, int):
                yield x
            else:
                yield from _bounds(x)
    elif isinstance(v, list):
        for x in v:
            yield from _bounds(x)


def _sampled(v):
    if isinstance(v, dict):
        items = list(v.items())
        if len(items) > 2 * SAMPLE:
            items = items[:SAMPLE] + items[-SAMPLE:]
        return {k: _sampled(x) for k, x in items}
    if isinstance(v, list):
        if len(v) > 2 * SAMPLE:
            v = v[:SAMPLE] + v[-SAMPLE:]
        return [_sampled(x) for x in v]
    return v


def _depth(e):
    return max([len(e.absolute_path)] + [_depth(c) for c in (e.context or [])])


def _deepest(e):
    best = e
    for c in e.context or []:
        d = _deepest(c)
        if len(d.absolute_path) > len(best.absolute_path):
            best = d
    return best


def _media_type(ctype):
    return ctype.split(";", 1)[0].strip().lower()


def _header_value(value, schema):
    """A header's text as the JSON value its schema describes."""
    t = schema.get("type")
    if t == "integer" or isinstance(schema.get("const"), int):
        try:
            return int(value)
        except ValueError:
            return value
    return value
