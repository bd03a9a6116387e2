"""``python -m sluice_client worker module:function --queue q``: see cli.py."""
import sys

from .cli import main

sys.exit(main())
