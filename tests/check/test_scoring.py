"""The course's scoring formulas at their edges, and the table layout."""
import pytest

from circle_render.course import RULES, render_table, scan_score, scan_table, scene_score

CMU, CS149 = RULES["cmu"], RULES["cs149"]


def test_rules_total_72():
    assert CMU.total == 72 and CS149.total == 72
    assert CMU.scenes == ("rgb", "rand10k", "rand100k", "pattern", "snowsingle", "biglittle")
    assert CS149.scenes[-2:] == ("rand1M", "micro2M") and CS149.points == 9


@pytest.mark.parametrize("tf", [0.0545, 0.455, 4.23, 25.8, 1.0, 3.0])
def test_exactly_1_2x_gets_full_points_just_above_does_not(tf):
    assert scene_score(CMU, True, 1.2 * tf, tf) == 12
    assert scene_score(CMU, True, 1.2 * tf * 1.001, tf) == 2 + 9     # ceil(10 / 1.2012) = 9
    assert scene_score(CS149, True, 1.2 * tf, tf) == 9


@pytest.mark.parametrize("tf", [0.0545, 0.455, 4.23, 25.8, 0.1, 0.7])
def test_exactly_10x_gets_one_perf_point_above_gets_correctness_only(tf):
    assert scene_score(CMU, True, 10 * tf, tf) == 2 + 1              # ceil(10 * 1/10) = 1
    assert scene_score(CMU, True, 10 * tf * 1.0001, tf) == 2
    assert scene_score(CS149, True, 10 * tf, tf) == 2 + 1            # ceil(0.7) = 1


def test_middle_of_the_range_and_failures():
    assert scene_score(CMU, True, 2.0, 1.0) == 2 + 5
    assert scene_score(CMU, True, 3.0, 1.0) == 2 + 4                 # ceil(3.33)
    assert scene_score(CS149, True, 2.0, 1.0) == 2 + 4               # ceil(3.5)
    assert scene_score(CMU, False, 0.5, 1.0) == 0                    # fast but wrong
    assert scene_score(CMU, True, None, 1.0) == 0                    # no time (it raised)
    assert scene_score(CMU, True, float("nan"), 1.0) == 0


def test_scan_score_edges():
    assert scan_score(True, 1.2 * 0.44, 0.44) == 1.25
    assert scan_score(True, 2.0, 1.0) == pytest.approx(0.625)
    assert scan_score(False, 0.1, 1.0) == 0.0


def test_render_table_layout():
    rows = [{"scene": "rgb", "tf": 0.0545, "t": 0.03, "passed": True, "score": 12, "live": False},
            {"scene": "rand10k", "tf": 0.455, "t": 9.0, "passed": False, "score": 0, "live": True}]
    lines = render_table(CMU, rows, "stored").splitlines()
    assert lines[4] == "| Scene Name      | Fast Time (Tf)  | Your Time (T)   | Score           |"
    assert lines[6] == "| rgb             | 0.0545          | 0.0300          | 12              |"
    assert lines[7] == "| rand10k         | 0.4550*         | 9.0000 (F)      | 0               |"
    assert lines[9] == "|                                   | Total score:    | 12/24           |"
    assert len({len(line) for line in lines[3:11]}) == 1                # every row the same width


def test_scan_table_layout():
    rows = [{"size": 10000, "tref": 0.117, "t": 0.01, "correct": True, "score": 1.25},
            {"size": 100000, "tref": 0.208, "t": None, "correct": False, "score": 0.0}]
    text = scan_table("Scan", rows)
    assert "| 10000           | 0.117           | 0.0100          | 1.25            |" in text
    assert "| 100000          | 0.208           | n/a (F)         | 0.00            |" in text
    assert "| Total score:    | 1.25/2.50       |" in text
