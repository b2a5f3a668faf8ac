"""Flavors read from the Hub's hardware list, and the cheapest one a plan fits on."""

from __future__ import annotations

from types import SimpleNamespace

from meshcert.hubjobs.hardware import Flavor, Needs, cheapest_fit, flavor_of, misfits, parse_bytes

# what list_jobs_hardware() answers, with writer.md's published values (per hour there; the
# API gives a per-minute price)
HARDWARE = [
    SimpleNamespace(name="cpu-basic", cpu="2 vCPU", ram="16 GB", ephemeral_storage="50 GB",
                    accelerator=None, unit_cost_usd=0.01 / 60, unit_label="minute"),
    SimpleNamespace(name="cpu-upgrade", cpu="8 vCPU", ram="32 GB", ephemeral_storage="50 GB",
                    accelerator=None, unit_cost_usd=0.03 / 60, unit_label="minute"),
    SimpleNamespace(name="cpu-xl", cpu="16 vCPU", ram="124 GB", ephemeral_storage="1000 GB",
                    accelerator=None, unit_cost_usd=1.00 / 60, unit_label="minute"),
    SimpleNamespace(name="t4-small", cpu="4 vCPU", ram="15 GB", ephemeral_storage="50 GB",
                    accelerator=SimpleNamespace(type="gpu"), unit_cost_usd=0.0001,
                    unit_label="minute"),
]


def flavors() -> list[Flavor]:
    return [f for info in HARDWARE if (f := flavor_of(info)) is not None]


def test_sizes_and_prices_are_read_as_numbers() -> None:
    basic = flavors()[0]
    assert (basic.cpus, basic.ram_bytes, basic.disk_bytes) == (2, 16 * 10**9, 50 * 10**9)
    assert round(basic.usd_per_hour, 6) == 0.01
    assert parse_bytes("N/A") is None and parse_bytes("1.5 TiB") == int(1.5 * 2**40)


def test_billing_counts_every_started_unit() -> None:
    basic = flavors()[0]
    assert basic.cost_usd(61) == 2 * basic.unit_cost_usd


def test_the_cheapest_cpu_flavor_that_fits_is_picked() -> None:
    small = Needs(disk_bytes=10 * 10**9, ram_bytes=2 * 10**9, cpus=2)
    assert cheapest_fit(flavors(), small).name == "cpu-basic"  # type: ignore[union-attr]
    big_disk = Needs(disk_bytes=200 * 10**9, ram_bytes=2 * 10**9, cpus=2)
    assert cheapest_fit(flavors(), big_disk).name == "cpu-xl"  # type: ignore[union-attr]


def test_a_gpu_flavor_is_never_picked_even_when_cheaper() -> None:
    needs = Needs(disk_bytes=10**9, ram_bytes=10**9, cpus=4)
    assert cheapest_fit(flavors(), needs).name == "cpu-upgrade"  # type: ignore[union-attr]


def test_disk_is_planned_on_at_most_80_percent() -> None:
    basic = flavors()[0]
    assert misfits(basic, Needs(disk_bytes=41 * 10**9, ram_bytes=1, cpus=1))
    assert not misfits(basic, Needs(disk_bytes=39 * 10**9, ram_bytes=1, cpus=1))


def test_a_price_in_an_unknown_unit_makes_no_flavor() -> None:
    odd = SimpleNamespace(name="x", cpu="2 vCPU", ram="1 GB", ephemeral_storage="1 GB",
                          accelerator=None, unit_cost_usd=1.0, unit_label="fortnight")
    assert flavor_of(odd) is None
    assert cheapest_fit([], Needs(1, 1, 1)) is None
