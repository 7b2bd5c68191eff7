"""50 distinct /pt-ws filters for oddsload --filter-file, from the events a
running oddsrelay lists, live ones first: 8 events each (a window sliding
by one), every other one also cut to 3 of the markets those events carry.
Used by perf/relay/run.sh (the 50-filters shape) and perf/relay/pair.sh.
    python3 perf/relay/make_filters.py PORT KEY > filters.txt"""
import json
import sys
import urllib.request


def rest(port, key, path):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"X-API-Key": key})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def main(port, key):
    # Live events first (they carry odds); pre-match ones after, should fewer than 58 be live.
    events = [k for p in ("/v1/live", "/v1/prematch")
              for k in sorted(k for evs in rest(port, key, p)["data"].values() for k in evs)]
    books = rest(port, key, "/v1/odds?ids=" + ",".join(events[:30]))["data"]
    markets = sorted({int(m) for b in books.values() for m in b})
    lines = []
    for j in range(50):
        q = "events=" + ",".join(events[(j + i) % len(events)] for i in range(8))
        if j % 2:
            q += "&markets=" + ",".join(str(markets[(j + i) % len(markets)]) for i in range(3))
        lines.append(q)
    assert len(set(lines)) == 50 and len(events) >= 50 and len(markets) >= 3, (len(events), markets)
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
