import { z } from 'zod';
import { environmentSchema } from '../config/environment.js';

/** JSON Schema of environment files, for editors (`# yaml-language-server: $schema=./schema.json`). */
export function environmentJsonSchema(): string {
  const schema = z.toJSONSchema(environmentSchema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' });
  return `${JSON.stringify({ ...schema, title: 'Karpenter GitOps environment', $comment: 'Generated from config/environment.ts by npm run synth; do not edit.' }, null, 2)}\n`;
}
