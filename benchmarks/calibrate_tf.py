"""Store cuda-tiled's per-scene ratio to the course's binary in circle_render/golden/ref_times.json.

The input is a same-call record: the course's binary and `render bench -r cuda-tiled -s 1024`
timed one after the other on one machine (per-frame Total, -b 0:4, 1024x1024, min of 3 runs),
as `{"gpu": ..., "size": 1024, "scenes": {"rgb": {"binary_total_ms": ..., "cuda_tiled_total_ms":
...}, ...}}` (benchmarks/results/H100-tiled-vs-binary-same-call.json is one). Ratios from two
sessions are not stored: the small scenes' launch and synchronize move between sessions.
`render check` divides cuda-tiled's live Total by the ratio to get Tf wherever no course time is
stored.

    python -m benchmarks calibrate-tf benchmarks/results/H100-tiled-vs-binary-same-call.json
"""
import argparse
import json
import re
import sys
from pathlib import Path

REF = Path(__file__).resolve().parent.parent / "circle_render" / "golden" / "ref_times.json"


def main(record_path: str) -> None:
    record = json.loads(Path(record_path).read_text())
    data = json.loads(REF.read_text())
    cal = data["calibration"]
    if record["size"] != data["size"] or record["gpu"] != cal["gpu"]:
        sys.exit(f"calibrate_tf: need a same-call record at {data['size']} on the {cal['gpu']}, "
                 f"got {record['size']} on {record['gpu']}")
    scenes = record["scenes"]
    ratios = {s: round(e["cuda_tiled_total_ms"] / e["binary_total_ms"], 3) for s, e in scenes.items()}
    items = [f'"{s}": {r}' for s, r in ratios.items()]
    lines, line = [], ""
    for item in items:
        if line and len(line) + len(item) > 88:
            lines.append(line.rstrip())
            line = ""
        line += item + ", "
    lines.append(line.rstrip(", "))
    block = '"ratio": {' + "\n              ".join(lines) + "}"
    text = re.sub(r'"ratio": \{[^}]*\}', lambda m: block, REF.read_text())
    json.loads(text)
    REF.write_text(text)
    for s, r in ratios.items():
        print(f"{s:<14} cuda-tiled {scenes[s]['cuda_tiled_total_ms']:.4f} ms / "
              f"binary {scenes[s]['binary_total_ms']:.4f} ms = {r}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("record", help="a same-call record of the course's binary and cuda-tiled")
    main(ap.parse_args().record)
