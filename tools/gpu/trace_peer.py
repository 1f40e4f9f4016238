"""Session 22: a device-timer breakdown of the peer follow-up (issue 23), from a trace
build's output (device printf stamps `T tag t a b`, host samples `H dir us`):
  tag 1 (pusher): t = published (after L4), a = push entered, b = position
  tag 2 (receiver's relay): t = moved into the spawn ring, a = first position, b = count
  tag 3 (receiver's worker): t = done add
  tag 4 (receiver's relay): t = mirror written, a = done
    python3 trace_peer.py < log"""
import re, sys, statistics

# Device printf and host lines interleave without newlines between them at times.
text = sys.stdin.read()
T = [tuple(int(x) for x in m) for m in re.findall(r"T (\d+) (\d+) (\d+) (\d+)", text)]
H = {}
for d, us in re.findall(r"H (\d\d) ([\d.]+)", text):
    H.setdefault(d, []).append(float(us))
T.sort(key=lambda e: e[1])
gaps = [(T[i + 1][1] - T[i][1], i) for i in range(len(T) - 1)]
cut = max(gaps)[1] + 1
phases = [T[:cut], T[cut:]]
print(f"{len(T)} stamps; phases of {len(phases[0])} and {len(phases[1])}; gap between {max(gaps)[0] / 1e6:.1f} ms")
med = lambda xs: statistics.median(xs) if xs else float("nan")
for d, (ph, key) in enumerate(zip(phases, ["01", "10"])):
    by = {k: [e for e in ph if e[0] == k] for k in (1, 2, 3, 4)}
    rows = {"push (enter to published), pusher's clock": [], "published to moved (two clocks)": [],
            "moved to done (receiver)": [], "done to mirror (receiver)": [], "push entered to mirror": []}
    for (_, tpub, tent, pos) in by[1]:
        if pos < 50:
            continue
        mv = next((e for e in by[2] if e[2] <= pos < e[2] + e[3] and e[1] >= tpub - 100_000), None)
        if not mv:
            continue
        dn = next((e for e in by[3] if e[1] >= mv[1]), None)
        if not dn:
            continue
        mr = next((e for e in by[4] if e[1] >= dn[1]), None)
        if not mr:
            continue
        rows["push (enter to published), pusher's clock"].append(tpub - tent)
        rows["published to moved (two clocks)"].append(mv[1] - tpub)
        rows["moved to done (receiver)"].append(dn[1] - mv[1])
        rows["done to mirror (receiver)"].append(mr[1] - dn[1])
        rows["push entered to mirror"].append(mr[1] - tent)
    print(f"\ndirection {key}: {len(rows['push entered to mirror'])} samples matched; host submit to completed() p50 {med(H.get(key, [])):.2f} us")
    for k, v in rows.items():
        v = sorted(v)
        if v:
            print(f"  {k:<46} p50 {med(v) / 1e3:7.2f} us   p10 {v[len(v) // 10] / 1e3:7.2f}   p90 {v[9 * len(v) // 10] / 1e3:7.2f}")
