"""``python -m theorydyn.vision``: bad input exits 2 with a named rule; tiny end-to-end runs."""

import dataclasses
import json
import subprocess
import sys

import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from test_vision_data import write_cifar  # noqa: E402

from theorydyn.vision import data as vdata  # noqa: E402
from theorydyn.vision.__main__ import main  # noqa: E402
from theorydyn.vision.data import md5sum  # noqa: E402

torch.set_num_threads(1)
TINY = ["--width", "16", "--depth", "1", "--heads", "2", "--mlp", "16", "--threads", "1"]


def exit_code(argv, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    return e.value.code, capsys.readouterr().err


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["mnist"], "invalid choice: 'mnist'"),
        (["cifar10", "--data-dir", "/no/such/dir"], "--data-dir"),
        (["digits", "--shuffle-grid", "3"], "--shuffle-grid: the grid size must divide the image size 8"),
        (["cifar10", "--shuffle-grid", "12"], "must divide the image size 32"),
        (["cifar10", "--shuffle-grid", "0"], "--shuffle-grid: must be > 0"),
        (
            ["digits", "--model", "vit", "--shuffle-grid", "2", "--patch", "4", "--experiment", "single"],
            "whole ViT patches",
        ),
        (["digits", "--patch", "3"], "--patch"),
        (["digits", "--width", "10", "--heads", "3"], "--heads"),
        (["digits", "--experiment", "nonsense"], "invalid choice"),
        (["digits", "--batch-size", "5000", "--experiment", "single"], "--batch-size"),
    ],
)
def test_bad_input_exits_2_naming_the_rule(argv, needle, capsys):
    code, err = exit_code(argv, capsys)
    assert code == 2
    assert needle in err
    assert "Traceback" not in err


def test_missing_archive_exits_2_naming_file_and_folder(tmp_path, capsys):
    assert main(["cifar100", "--data-dir", str(tmp_path), "--no-download"]) == 2
    err = capsys.readouterr().err
    assert "cifar-100-python.tar.gz" in err and str(tmp_path) in err


@pytest.mark.slow
def test_subprocess_exit_status():
    r = subprocess.run(
        [sys.executable, "-m", "theorydyn.vision", "svhn", "--data-dir", "/no/such/dir"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and "--data-dir" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.slow
def test_cifar10_end_to_end_on_a_self_made_archive(tmp_path, monkeypatch, capsys):
    arch = tmp_path / "cifar-10-python.tar.gz"
    write_cifar(arch, "cifar10", n_train=(8, 8, 8, 8, 8), n_test=10)
    monkeypatch.setitem(vdata.CIFAR["cifar10"], "md5", md5sum(arch))
    out = tmp_path / "out"
    argv = [
        "cifar10",
        "--data-dir",
        str(tmp_path),
        "--epochs",
        "2",
        "--batch-size",
        "16",
        "--patch",
        "4",
        "--shuffle-grid",
        "8",
        "--out",
        str(out),
        "--device",
        "cpu",
        *TINY,
    ]
    assert main(argv) == 0
    run = out / "vit-positional-s8-seed0"
    h = pd.read_csv(run / "history.csv")
    assert h.epoch.tolist() == [1, 2]
    assert (run / "pos_similarity.png").exists() and (run / "checkpoint.pt").exists()
    assert '"perm"' in (run / "run.json").read_text()
    # --resume with everything done reproduces the table without training
    assert main([*argv, "--resume"]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(run / "history.csv"), h)


@pytest.mark.slow
def test_digits_compare_and_permuted_experiments_write_their_plots(tmp_path, capsys):
    out = tmp_path / "cmp"
    assert main(["digits", "--experiment", "compare", "--seeds", "2", "--epochs", "1", "--out", str(out), *TINY]) == 0
    s = pd.read_csv(out / "summary.csv")
    assert sorted(s.attention) == ["positional", "positional", "vanilla", "vanilla"]
    assert (out / "compare.png").exists()
    printed = capsys.readouterr().out
    for att in ("positional", "vanilla"):
        acc = s[s.attention == att].final_test_acc
        assert f"{att}: mean final test accuracy {acc.mean():.4f} over 2 seeds" in printed
    out = tmp_path / "perm"
    argv = ["digits", "--experiment", "permuted", "--epochs", "1", "--batch-size", "128", "--out", str(out), *TINY]
    assert main(argv) == 0
    s = pd.read_csv(out / "summary.csv")
    assert sorted(set(s.grid)) == [2, 4, 8] and set(s.model) == {"vit", "cnn"}
    assert (out / "permuted.png").exists() and (out / "vit-positional-s2-seed0" / "pos_similarity.png").exists()
    assert "final_test_acc" in capsys.readouterr().out


def test_compare_refuses_attention_with_exit_2(capsys):
    code, err = exit_code(["digits", "--experiment", "compare", "--attention", "vanilla"], capsys)
    assert code == 2 and "--attention" in err


@pytest.mark.slow
def test_demo_honours_attention_and_robustness_writes_drops(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["digits", "--attention", "vanilla", "--epochs", "1", "--out", str(out), *TINY]) == 0
    assert pd.read_csv(out / "summary.csv").attention.tolist() == ["vanilla"]
    # the CLI trains the very network and schedule of the ledger's preset_configs (every field)
    from theorydyn.vision.experiments import preset_configs

    vit, tcfg = preset_configs(
        vdata.load("digits", download=False), attention="vanilla", width=16, depth=1, heads=2, mlp=16, epochs=1
    )
    record = json.loads((out / "vit-vanilla-s0-seed0" / "run.json").read_text())
    assert record["meta"]["vit"] == vit.to_dict()
    assert record["train"] == json.loads(json.dumps(dataclasses.asdict(tcfg)))
    out = tmp_path / "rob"
    argv = ["digits", "--experiment", "robustness", "--seeds", "1", "--epochs", "1", "--out", str(out), *TINY]
    assert main(argv) == 0
    s = pd.read_csv(out / "summary.csv")
    pairs = sorted(zip(s.model, s.permuted, strict=True))
    assert pairs == [("cnn", False), ("cnn", True), ("vit", False), ("vit", True)]
    assert (out / "robustness.png").exists()
    assert "accuracy drop under π_2" in capsys.readouterr().out


def test_presets_digits_tuned_and_cifar_the_papers_vit():
    from theorydyn.vision.experiments import PRESETS, VIT_KEYS

    c = PRESETS["cifar"]
    assert tuple(c[k] for k in VIT_KEYS) == (384, 7, 12, 384, 4, "vit", 0.02)
    d = PRESETS["digits"]
    assert tuple(d[k] for k in VIT_KEYS) == (64, 4, 4, 128, 2, "torch", 1.0)
    assert set(c) == set(d)


def test_init_and_pos_std_flags_reach_the_network(tmp_path):
    out = tmp_path / "single"
    assert (
        main(
            [
                "digits",
                "--experiment",
                "single",
                "--init",
                "vit",
                "--pos-std",
                "0.5",
                "--epochs",
                "1",
                "--out",
                str(out),
                *TINY,
            ]
        )
        == 0
    )
    vit = json.loads((out / "vit-positional-s0-seed0" / "run.json").read_text())["meta"]["vit"]
    assert (vit["init"], vit["pos_std"]) == ("vit", 0.5)


def test_the_flags_are_the_fields_of_the_run_config(tmp_path):
    """``python -m theorydyn.vision``'s own flags, the positional dataset included, are VisionConfig's fields
    (issue 40); the training flags stay TrainConfig's, None where the dataset's preset decides."""
    from theorydyn.cli.configs import config_from_args
    from theorydyn.vision.__main__ import build_parser
    from theorydyn.vision.config import VisionConfig

    args = build_parser().parse_args(["svhn", "--data-dir", str(tmp_path), "--seeds", "2", "--width", "32"])
    cfg = config_from_args(VisionConfig, args)
    assert (cfg.dataset, cfg.data_dir, cfg.seeds, cfg.width) == ("svhn", tmp_path, 2, 32)
    assert cfg.chosen_experiment == "single" and cfg.image_size == 32 and args.epochs is None
    assert config_from_args(VisionConfig, build_parser().parse_args([])) == VisionConfig()
    with pytest.raises(ValueError, match="^seeds must be"):
        VisionConfig(seeds=0)
