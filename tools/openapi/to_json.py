#!/usr/bin/env python3
"""Build step: docs/openapi.yaml (the contract, written by hand) to the JSON
the server serves at /openapi.json. Anchors are expanded; the output is
compact and ends with a newline.  Usage: to_json.py IN.yaml OUT.json"""
import json
import os
import sys

import yaml


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: to_json.py IN.yaml OUT.json")
    with open(sys.argv[1]) as f:
        doc = yaml.safe_load(f)
    if not isinstance(doc, dict) or not str(doc.get("openapi", "")).startswith("3.1"):
        sys.exit(f"{sys.argv[1]}: not an OpenAPI 3.1 document")
    os.makedirs(os.path.dirname(os.path.abspath(sys.argv[2])), exist_ok=True)
    with open(sys.argv[2], "w") as f:
        json.dump(doc, f, separators=(",", ":"), ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
