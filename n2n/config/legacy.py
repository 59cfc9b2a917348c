"""Where earlier config.json layouts held what now lives elsewhere: users have
runs trained by earlier versions, and validate.py, denoise.py, export.py and a
resumed training still read them.

Two layouts came before today's:
- flat: every setting at the top level under its flag name, with only model
  and augment as sections (main at daa6c09; tests/legacy/);
- flat with a 'methods' section holding each method's settings (d35cebd).
The flag names never change, so a setting missing from its section is looked
for at the top level under its flag name (settings.from_dict); what moved
otherwise is listed here, and nowhere else.
"""

# Path in today's layout -> earlier places, tried in order. A section's entry
# applies to every field under it.
EARLIER_PLACES = {
    ('data', 'augment'): (('augment',),),
    # The data's format, derived from its manifest, was written at the top level.
    ('data', 'dtype'): (('data_dtype',),),
    ('data', 'channels'): (('data_channels',),),
    ('data', 'white_level'): (('white_level',),),
    ('method', 'neighbor2neighbor'): (('methods', 'neighbor2neighbor'),),
    ('method', 'blind_spot'): (('methods', 'blind_spot'),),
}
