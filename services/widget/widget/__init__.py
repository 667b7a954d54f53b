"""The widget service: the embeddable widget's script and the small API its panel calls."""
