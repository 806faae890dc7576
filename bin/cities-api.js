#!/usr/bin/env node
import { runMain } from '../lib/cli/main.js';

process.exitCode = await runMain({ rawArgs: process.argv.slice(2) });
