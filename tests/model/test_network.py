"""A run's settings reach the network it trains, restores and exports."""

from n2n import config as config_lib
from n2n.model import network


def _hand_counted_parameters(channels, encoder, decoder, top_a, top_b):
  """Weights and biases of the 2D U-Net's 3x3 convolutions, from its graph as the
  paper draws it: (inputs, outputs) of each layer written out, skips included."""
  layers = ([(channels, encoder)] + [(encoder, encoder)] * 6  # enc_conv0, enc_conv1-6
            + [(encoder + encoder, decoder), (decoder, decoder)]  # dec_conv5a/b: pool4 skip
            + [(decoder + encoder, decoder), (decoder, decoder)] * 3  # dec_conv4-2
            + [(decoder + channels, top_a), (top_a, top_b), (top_b, channels)])  # top skip
  return sum(3 * 3 * inputs * outputs + outputs for inputs, outputs in layers)


def test_the_hand_count_gives_the_papers_991203_parameters():
  # The count the paper's network is known by (tests/model/test_unet.py builds it).
  assert _hand_counted_parameters(3, 48, 96, 64, 32) == 991203


def test_a_runs_network_width_reaches_the_network_it_builds():
  for width, widths in ((24, (24, 48, 32, 16)), (48, (48, 96, 64, 32))):
    run_config = config_lib.train_config(train_data='data', model_dir='m', channels=3,
                                         network_width=width)
    model = network.build_run_network(run_config, 'float32', seed=1)
    assert model.get_layer('enc_conv3').filters == width
    # 249,075 at width 24: a quarter (0.251) of the paper's 991,203.
    assert model.count_params() == _hand_counted_parameters(3, *widths)
