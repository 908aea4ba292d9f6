"""How things look: the light and dark themes (Qt), the labels, glyphs and colours of job and
artifact states (Qt-free), and where the icons and style sheets are found."""
