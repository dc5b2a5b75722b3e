"""The browser of the login tests (`BROWSER="python follow_browser.py %s"`): it fetches the address
and follows its redirects, the last one to agentcli's listener, as a user clicking "allow" would.
Standard library only: run with `-I -S`."""

import sys
import urllib.request

urllib.request.urlopen(sys.argv[1], timeout=30).read()
