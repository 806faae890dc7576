import { checkLiveUrl } from '../hosts/live-url.js';
import { normalizeBaseUrl } from '../site/spec.js';
import type { OptionSpec } from './option-spec.js';

// Rows of the option table (options.ts): what config nginx, config cloudfront and edge write
// besides the site they read: the live server's URL, the CloudFormation stack, the edge project.

export const DEPLOY_OPTIONS: readonly OptionSpec[] = [
  {
    key: 'liveUrl',
    flag: '--live-url <url>',
    help: 'where cities-api serve listens',
    commands: ['config nginx'],
    default: 'http://127.0.0.1:8080',
    parse: normalizeBaseUrl,
  },
  {
    key: 'liveUrl',
    flag: '--live-url <url>',
    help: 'origin for queries no file answers (a cities-api serve, or the function URL of cities-api edge lambda)',
    commands: ['config cloudfront'],
    defaultText: "the site's --live-url, else a 404 saying so",
    parse: checkLiveUrl,
  },
  {
    key: 'stack',
    flag: '--stack',
    help: 'print a CloudFormation template (YAML) of the whole deployment instead: bucket, origin access control, this function, policies, distribution (docs/cloudfront.md)',
    commands: ['config cloudfront'],
  },
  {
    key: 'project',
    flag: '--project <dir>',
    aliases: ['--out <dir>'],
    help: 'directory the edge project is written to (docs/deploy.md)',
    commands: ['edge'],
    defaultText: 'edge-PLATFORM',
  },
];
