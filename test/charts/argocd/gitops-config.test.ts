import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../config/errors.js';
import { checkEnvironmentsCovered, loadGitops, parseGitops } from '../../../config/gitops.js';

const REPO_URL = 'repository: {url: "https://git.example.com/platform/karpenter-gitops.git"}\n';

function messageOf(text: string): string {
  try {
    parseGitops('gitops.yaml', text);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('gitops.yaml validation', () => {
  it('GIVEN the example file WHEN loaded THEN it parses with defaults filled in', () => {
    const { config } = loadGitops(new URL('../../../gitops.yaml', import.meta.url).pathname);
    expect(config.argocd).toEqual({ namespace: 'argocd', project: 'karpenter-gitops' });
    expect(config.repository.targetRevision).toBe('main');
    expect(config.environments.prod).toEqual({ destination: { name: 'karpenter-prod' } });
  });

  it('GIVEN a minimal file WHEN parsed THEN namespace, project and revision get their defaults', () => {
    const { config } = parseGitops('gitops.yaml', `${REPO_URL}environments:\n  dev: {fleet: {}}\n`);
    expect(config).toEqual({
      repository: { url: 'https://git.example.com/platform/karpenter-gitops.git', targetRevision: 'main' },
      argocd: { namespace: 'argocd', project: 'karpenter-gitops' },
      environments: { dev: { fleet: { matchLabels: {} } } },
    });
  });

  it.each([
    [
      'a non-Git URL',
      'repository: {url: "ftp://x/y"}\nenvironments: {}\n',
      'gitops.yaml: repository.url: must be a Git repository URL such as https://git.example.com/platform/karpenter-gitops.git or git@git.example.com:platform/karpenter-gitops.git, got "ftp://x/y"',
    ],
    ['no repository', 'environments: {}\n', 'gitops.yaml: repository: is required (a map)'],
    [
      'both destination and fleet',
      `${REPO_URL}environments:\n  prod: {destination: {name: p}, fleet: {}}\n`,
      'gitops.yaml: environments.prod: must set exactly one of destination (one cluster) or fleet (ApplicationSets over labelled clusters), got {"destination":{"name":"p"},"fleet":{}}',
    ],
    [
      'neither destination nor fleet',
      `${REPO_URL}environments:\n  prod: {}\n`,
      'gitops.yaml: environments.prod: must set exactly one of destination (one cluster) or fleet (ApplicationSets over labelled clusters), got {}',
    ],
    [
      'a plain-http server',
      `${REPO_URL}environments:\n  prod: {destination: {server: "http://10.0.0.1"}}\n`,
      'gitops.yaml: environments.prod.destination.server: must be an https:// API server URL, got "http://10.0.0.1"',
    ],
    [
      'a destination with both server and name',
      `${REPO_URL}environments:\n  prod: {destination: {server: "https://x", name: y}}\n`,
      'gitops.yaml: environments.prod.destination: must set exactly one of server (API server URL) or name (cluster registered in Argo CD), got {"server":"https://x","name":"y"}',
    ],
    [
      'an environment name that is no object name',
      `${REPO_URL}environments:\n  Prod: {destination: {name: p}}\n`,
      'gitops.yaml: environments.Prod: key "Prod" is not allowed: it must be a lowercase RFC 1123 name (a-z, 0-9, "-" and ".", starting and ending alphanumeric), got {"destination":{"name":"p"}}',
    ],
    [
      'the project name karpenter',
      `${REPO_URL}argocd: {project: karpenter}\nenvironments: {}\n`,
      'gitops.yaml: argocd.project: must not be "karpenter" (the chart already renders objects of that name; pick e.g. karpenter-gitops), got "karpenter"',
    ],
    ['an unknown field', 'repository: {url: "https://git.example.com/a/b.git", branch: main}\nenvironments: {}\n', 'gitops.yaml: repository: unknown field "branch"; allowed: url, targetRevision'],
    [
      'a bad fleet label key',
      `${REPO_URL}environments:\n  prod: {fleet: {matchLabels: {"bad key!": x}}}\n`,
      'gitops.yaml: environments.prod.fleet.matchLabels["bad key!"]: key "bad key!" is not allowed: it must be a label key: an optional DNS prefix and "/", then letters, digits, "-", "_" or ".", got "x"',
    ],
    [
      'a fleet that overrides the environment label',
      `${REPO_URL}environments:\n  prod: {fleet: {matchLabels: {environment: staging}}}\n`,
      'gitops.yaml: environments.prod.fleet.matchLabels: must not set "environment": the environment\'s name is that label\'s value, got {"environment":"staging"}',
    ],
    ['a list', '- a\n', 'gitops.yaml: (top level): must be a YAML map with repository, argocd and environments, got ["a"]'],
    ['a duplicate key', `${REPO_URL}${REPO_URL}`, 'gitops.yaml:2:1: (top level): is not valid YAML: Map keys must be unique'],
  ])('GIVEN %s WHEN parsed THEN the error names file, field, value and what is allowed', (_what, text, expected) => {
    expect(messageOf(text)).toBe(expected);
  });

  it('GIVEN a missing file WHEN loaded THEN it says so', () => {
    expect(() => loadGitops('/nonexistent/gitops.yaml')).toThrow(new ConfigError('gitops.yaml', [{ path: '', message: 'does not exist' }]));
  });

  it('GIVEN environments/ and gitops.yaml disagree WHEN checked THEN every missing and stray entry is listed', () => {
    const gitops = parseGitops('gitops.yaml', `${REPO_URL}environments:\n  dev: {fleet: {}}\n  qa: {fleet: {}}\n`);
    expect(() => checkEnvironmentsCovered(gitops, ['dev', 'prod'])).toThrow(
      new ConfigError('gitops.yaml', [
        { path: 'environments', message: 'has no entry for environment "prod" (environments/prod.yaml); add a destination or fleet for it' },
        { path: 'environments.qa', message: 'names no environment file; environments are: dev, prod' },
      ]),
    );
    expect(() => checkEnvironmentsCovered(gitops, ['dev', 'prod'])).toThrow(
      'gitops.yaml: environments: has no entry for environment "prod" (environments/prod.yaml); add a destination or fleet for it\ngitops.yaml: environments.qa: names no environment file; environments are: dev, prod',
    );
  });
});

const CREDENTIALS =
  'must not carry credentials (user:password@ or token@): they would be committed to argocd/; give Argo CD a repository secret instead';

describe('gitops.yaml: what would leak or collide once committed', () => {
  it.each([
    ['https://deploy:s3cret@git.example.com/platform/karpenter-gitops.git'],
    ['https://ghp_0123456789abcdef@git.example.com/platform/karpenter-gitops.git'],
    ['ssh://git:s3cret@git.example.com/platform/karpenter-gitops.git'],
  ])('GIVEN repository URL %s WHEN parsed THEN refused: it would be committed', (url) => {
    expect(messageOf(`repository: {url: "${url}"}\nenvironments: {dev: {fleet: {}}}\n`)).toBe(`gitops.yaml: repository.url: ${CREDENTIALS}, got "${url}"`);
  });

  it.each([['ssh://git@git.example.com/platform/x.git'], ['git@git.example.com:platform/x.git'], ['https://git.example.com/platform/x.git']])(
    'GIVEN repository URL %s (a user name, no secret) WHEN parsed THEN accepted',
    (url) => {
      expect(parseGitops('gitops.yaml', `repository: {url: "${url}"}\nenvironments: {dev: {fleet: {}}}\n`).config.repository.url).toBe(url);
    },
  );

  it('GIVEN two environments with the same destination cluster WHEN parsed THEN the second is refused, naming the first', () => {
    const text =
      'repository: {url: "https://git.example.com/p/x.git"}\nenvironments:\n  dev: {destination: {name: shared}}\n  staging: {destination: {server: "https://k8s.example.com"}}\n  prod: {destination: {name: shared}}\n  qa: {destination: {server: "https://k8s.example.com"}}\n';
    expect(messageOf(text)).toBe(
      'gitops.yaml: environments.prod.destination.name: must not be the cluster of environment "dev" as well: one cluster runs one environment, got "shared"\n' +
        'gitops.yaml: environments.qa.destination.server: must not be the cluster of environment "staging" as well: one cluster runs one environment, got "https://k8s.example.com"',
    );
  });
});
