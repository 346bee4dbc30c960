"""One widget per dashboard pane."""
