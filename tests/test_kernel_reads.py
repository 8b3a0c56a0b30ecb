"""ckspace.rules.kernel: typed reads of a config. A number is an int and never a bool, a text a str; every int field
of a listed kernel reads as a number and every enum field as a text (the types fields.toml gives them)."""

from __future__ import annotations

import pytest

from ckspace import Space
from ckspace.rules import kernel


def test_a_number_is_an_int_and_not_a_bool_or_a_text() -> None:
    config = {"tile_m": 128, "double_smem_buffer": True, "pipeline": "compv3"}
    assert kernel.number(config, "tile_m") == 128
    with pytest.raises(TypeError, match="double_smem_buffer"):
        kernel.number(config, "double_smem_buffer")
    with pytest.raises(TypeError, match="pipeline"):
        kernel.number(config, "pipeline")
    assert kernel.text(config, "pipeline") == "compv3"
    with pytest.raises(TypeError, match="tile_m"):
        kernel.text(config, "tile_m")
    with pytest.raises(KeyError):
        kernel.number(config, "tile_n")


@pytest.mark.parametrize("arch", ["gfx950", "gfx1201"])
def test_the_fields_of_listed_kernels_read_with_their_types(arch: str) -> None:
    space = Space(arch=arch)
    fields = space.data.fields
    for config in space.sample(40, seed=7):
        name = str(config["name"])
        assert kernel.stratum_of(config) == (config["variant"], config["ndim"], config["dtype"])
        assert f"_{config['ndim']}d_" in name
        for key, value in config.items():
            f = fields.get(key)
            if f is None:
                continue
            if f.type == "int":
                assert kernel.number(config, key) == value
            elif f.type == "enum":
                assert kernel.text(config, key) == value
