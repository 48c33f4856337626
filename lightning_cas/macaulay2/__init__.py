"""Macaulay2 as an external process: rendering scripts from the templates in m2/templates/ (render), running
them as scripts or in a persistent session (runner), and parsing their records (parse)."""
