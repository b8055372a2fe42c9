"""circle-render: the CMU 15-418 / Stanford CS149 circle renderer in Python."""
