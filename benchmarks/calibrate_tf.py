"""Store cuda-tiled's per-scene ratio to the course's binary in circle_render/golden/ref_times.json,
from a `render bench -r cuda-tiled -s 1024` record taken on the GPU the binary's times were
stored for: ratio = cuda-tiled Total / stored binary Total (same method: per-frame Total,
-b 0:4, 1024x1024, min of 3 runs). `render check` divides cuda-tiled's live time by it to get Tf
wherever no course time is stored.

    python benchmarks/calibrate_tf.py benchmarks/results/H100-cuda-tiled-1024-....json
"""
import json
import re
import sys
from pathlib import Path

REF = Path(__file__).resolve().parent.parent / "circle_render" / "golden" / "ref_times.json"


def main(record_path: str) -> None:
    record = json.loads(Path(record_path).read_text())
    data = json.loads(REF.read_text())
    cal = data["calibration"]
    if record["renderer"] != cal["renderer"] or record["size"] != data["size"] or record["gpu"] != cal["gpu"]:
        sys.exit(f"calibrate_tf: need a {cal['renderer']} record at {data['size']} on the {cal['gpu']}, "
                 f"got {record['renderer']} at {record['size']} on {record['gpu']}")
    binary = data["gpus"][cal["gpu"]]["render"]
    ratios = {s: round(e["total_ms"] / binary[s], 3) for s, e in record["scenes"].items()}
    method = (f"Where no course time is stored (another GPU, another size, a scene a GPU's table lacks), "
              f"Tf = the {cal['renderer']} renderer's Total measured live in the same check, divided by "
              f"ratio[scene]. ratio = {cal['renderer']} Total / course binary Total (the stored "
              f"{cal['gpu']} times above), both per-frame Total, {data['size']}x{data['size']}, -b 0:4, "
              f"min of 3 runs, on the {cal['gpu']}; {cal['renderer']} timed at commit "
              f"{str(record.get('commit'))[:10]} on {record['date'][:10]} "
              f"(record benchmarks/results/{Path(record_path).name}).")
    text = REF.read_text()
    items = [f'"{s}": {r}' for s, r in ratios.items()]
    lines, line = [], ""
    for item in items:
        if line and len(line) + len(item) > 88:
            lines.append(line.rstrip())
            line = ""
        line += item + ", "
    lines.append(line.rstrip(", "))
    block = '"ratio": {' + "\n              ".join(lines) + "}"
    text = re.sub(r'"ratio": \{[^}]*\}', lambda m: block, text)
    text = re.sub(r'"method": "[^"]*"', lambda m: json.dumps("method") + ": " + json.dumps(method), text)
    json.loads(text)
    REF.write_text(text)
    for s, r in ratios.items():
        print(f"{s:<14} cuda-tiled {record['scenes'][s]['total_ms']:.4f} ms / binary {binary[s]} ms = {r}")


if __name__ == "__main__":
    main(sys.argv[1])
