"""Issue 35 item 13: `neuron-widgets sample --help` described none of its options. Every option and
argument of every subcommand says what it is."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from neuron_widgets.cli import parser


def subcommands() -> dict[str, argparse.ArgumentParser]:
    (sub,) = [a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_every_option_of_every_subcommand_has_a_help_text(name: str) -> None:
    cmd = subcommands()[name]
    silent = [a.option_strings or [a.dest] for a in cmd._actions
              if not isinstance(a, argparse._HelpAction) and len((a.help or "").strip()) < 12]
    assert not silent, f"neuron-widgets {name}: options without a help text: {silent}"


def test_sample_help_describes_its_options() -> None:
    out = subprocess.run([sys.executable, "-m", "neuron_widgets", "sample", "--help"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    for words in ("about how many system events", "random seed", "EC2 instances", "processes per instance",
                  "NeuronCores per process", "default 20000", "where to write it"):
        assert words in text, (words, text)
