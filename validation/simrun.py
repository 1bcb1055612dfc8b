"""Runs `fabricsim sim` on a scenario for the validation scripts (jitter.py,
random.py) and returns its JSON results; exits naming the script, the case
and the options if fabricsim fails."""
import json
import subprocess
import sys


def sim_json(fabricsim, case, options, script):
    res = subprocess.run([fabricsim, "sim", case, "--format", "json"] + options,
                         capture_output=True, text=True)
    if res.returncode:
        sys.exit("%s: %s %s failed: %s" % (script, case, " ".join(options), res.stderr.strip()))
    return json.loads(res.stdout)
