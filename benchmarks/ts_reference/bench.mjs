// Median µs per call of the published TypeScript reference (@deepseek-ai/dsh-tools)
// with the same listener set as benchmarks/_common.full_registry: 3 pre-execute
// listeners, 1 guard, 1 tools/execute wrapper, 1 post-execute listener and
// 2 tools/result observers, around an `add` tool and a 10-field nested-object tool.
//
// Run: DSH_TS_ROOT=<folder> [BATCH=500] node bench.mjs
// where <folder> holds `npm install @deepseek-ai/dsh-tools@0.1.0-rc.8`
// (benchmarks/compare.py does both, in a temporary folder).
// Prints one JSON line: {"version", "node", "add": µs, "profile": µs}.
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const root = process.env.DSH_TS_ROOT
if (!root) {
  console.error('set DSH_TS_ROOT to the folder holding node_modules/@deepseek-ai/dsh-tools')
  process.exit(2)
}
const require = createRequire(path.join(root, 'package.json'))
const load = async (name) => import(pathToFileURL(require.resolve(name)).href)

const { Context } = await load('@deepseek-ai/cordis')
const { SystemPrompt } = await load('@deepseek-ai/dsh-system-prompt')
const tools = await load('@deepseek-ai/dsh-tools')
const { ToolRuntime, defineTool } = tools
const pkg = require('@deepseek-ai/dsh-tools/package.json')

const ctx = new Context()
await ctx.plugin(SystemPrompt)
await ctx.plugin(ToolRuntime)
const runtime = ctx.tools
if (!runtime) throw new Error('ToolRuntime did not mount on the Context')

const str = { type: 'string' }
runtime.register(defineTool({
  name: 'add',
  description: 'Add two integers.',
  parameters: {
    a: { type: 'integer', required: true },
    b: { type: 'integer', required: true },
  },
  output: { schema: str, render: (_args, value) => [{ type: 'text', text: value }] },
  async execute(args) { return String(args.a + args.b) },
}))
runtime.register(defineTool({
  name: 'profile',
  description: 'Store a 10-field profile.',
  parameters: {
    name: { type: 'string', required: true },
    age: { type: 'integer', required: true },
    email: { type: 'string', required: true },
    tags: { type: 'array', items: { type: 'string' }, required: true },
    active: { type: 'boolean', required: true },
    score: { type: 'number', required: true },
    address: {
      type: 'object',
      additionalProperties: true,
      required: true,
      properties: {
        street: { type: 'string', required: true },
        city: { type: 'string', required: true },
        zip: { type: 'string', required: true },
      },
    },
    prefs: {
      type: 'object',
      additionalProperties: true,
      required: true,
      properties: {
        theme: { type: 'string', enum: ['light', 'dark'], required: true },
        lang: { type: 'string', required: true },
      },
    },
    notes: { type: 'string', required: true },
    priority: { type: 'string', enum: ['low', 'high'], required: true },
  },
  output: { schema: str, render: (_args, value) => [{ type: 'text', text: value }] },
  async execute(a) { return `${a.name} ${a.age} ${a.address.city} ${a.prefs.theme}` },
}))

for (let i = 0; i < 3; i++) ctx.on('tools/pre-execute', (_exec, next) => next())
runtime.guard(() => undefined)
ctx.on('tools/execute', async (_exec, next) => await next())
ctx.on('tools/post-execute', (_exec, _result, next) => next())
ctx.on('tools/result', () => undefined)
ctx.on('tools/result', () => undefined)

const ARGS = {
  add: { a: 1, b: 2 },
  profile: {
    name: 'Ada', age: 36, email: 'ada@example.org', tags: ['math', 'engines'],
    active: true, score: 9.5,
    address: { street: '1 Loop Rd', city: 'London', zip: 'N1' },
    prefs: { theme: 'dark', lang: 'en' },
    notes: 'first programmer', priority: 'high',
  },
}
const EXPECT = { add: '3', profile: 'Ada 36 London dark' }

async function measure(name, batch = Number(process.env.BATCH ?? 500), rounds = 15) {
  const controller = new AbortController()
  const input = { callId: 'c1', name, arguments: ARGS[name], signal: controller.signal }
  const first = await runtime.execute(input)
  if (first.isError || first.content[0]?.text !== EXPECT[name]) {
    throw new Error(`${name} failed: ${JSON.stringify(first)}`)
  }
  for (let i = 0; i < batch; i++) await runtime.execute(input)
  const samples = []
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < batch; i++) await runtime.execute(input)
    samples.push(Number(process.hrtime.bigint() - start) / 1000 / batch)
  }
  samples.sort((x, y) => x - y)
  return samples[Math.floor(samples.length / 2)]
}

const out = { version: pkg.version, node: process.version }
for (const name of ['add', 'profile']) out[name] = await measure(name)
console.log(JSON.stringify(out))
await ctx.fiber?.dispose?.()
process.exit(0)
