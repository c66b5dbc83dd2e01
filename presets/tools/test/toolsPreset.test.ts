import { afterAll, describe, expect, test } from '@jest/globals';
import { arithmeticTasks, fileTasks, syntheticToolTasks, type ToolTask } from '@drmas/plugin-env-tools';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { baseCheckpointBytes, infoOf, trainOneStep } from '../../../test/support/presetChecks.js';
import { TempProject } from '../../../test/support/tempProject.js';
import { AssistantAgent, toolsOrchestra } from '../src/toolsOrchestra.js';
import { toolsTeacher } from '../src/buildBase.js';

const scratch = new TempProject('preset-tools');
afterAll(() => scratch.dispose());

describe('the Assistant', () => {
  const assistant = new AssistantAgent({ ...toolsOrchestra.agents.assistant!, role: 'assistant' });

  test('a turn is valid when it holds calls that all parse, or an answer', () => {
    expect(assistant.parse('<tool_call>{"name": "fs", "arguments": {"op": "list", "path": "/"}}</tool_call>')).toMatchObject({
      valid: true,
    });
    expect(assistant.parse('<answer>42</answer>')).toEqual({ valid: true, action: { tag: 'answer', content: '42' } });
    expect(assistant.parse('<tool_call>{"name": </tool_call>')).toMatchObject({
      valid: false,
      reason: expect.stringMatching(/not valid JSON/),
    });
    expect(assistant.parse('42', 'length')).toEqual({
      valid: false,
      reason: 'neither a <tool_call> nor an <answer> (cut at maxNewTokens)',
    });
  });
});

describe('the tools teacher', () => {
  const tasks = new Map<string, ToolTask>(
    syntheticToolTasks({ seed: 0, kinds: [arithmeticTasks, fileTasks], trainSize: 20, testSize: 0 }).train.map((t) => [t.question, t]),
  );
  const teacher = toolsTeacher(tasks);

  test("calls the task's tool first, then answers once a result is in the prompt", () => {
    const task = [...tasks.values()].find((t) => t.dataSource === 'tools-arithmetic')!;
    const expression = /^What is (.*)\?$/.exec(task.question)![1]!;
    const prompt = `<|im_start|>user\nTools: calculator, search, fs\nQ: ${task.question}\n`;
    expect(teacher(prompt)).toBe(`<tool_call>{"name":"calculator","arguments":{"expression":"${expression}"}}</tool_call>`);
    expect(teacher(`${prompt}<tool_call>...</tool_call>\n<tool_response>${task.answer}</tool_response>`)).toBe(
      `<answer>${task.answer}</answer>`,
    );
    expect(teacher('Tools: fs\nQ: Write a poem.\n')).toBe('I cannot read the task.');
  });
});

// The built CLI, as a user runs it.
describe('@drmas/preset-tools', () => {
  test('drmas info lists the assistant, the tools orchestra, environment and tools', () => {
    const report = infoOf('examples/tools/drmas.config.json');
    expect(report.presets.map((p) => p.name)).toEqual(['@drmas/preset-tools']);
    expect(report.sections.workflow).toMatchObject({ orchestra: 'tools', agents: ['assistant'], environment: 'tools' });
  });

  test('ships a base checkpoint of at most 8 MB', () => {
    expect(baseCheckpointBytes('tools')).toBeLessThanOrEqual(8 * 1024 * 1024);
  });
});

describeSlow('@drmas/preset-tools training', () => {
  test('one training step from the base checkpoint: the assistant calls tools and its episodes are judged', () => {
    const line = trainOneStep('examples/tools/drmas.config.json', scratch.path('one-step'), [
      'trainer.seed=1',
      'rollout.promptsPerStep=4',
      'rollout.samplesPerPrompt=2',
    ]);
    expect(Number.isFinite(line['actor/policy/grad_norm'])).toBe(true);
    // Eight episodes of at least one turn each; the base writes calls, so some episodes take more.
    expect(line['agent/assistant/turns']).toBeGreaterThan(8);
    expect(line['env/calls']).toBeGreaterThan(0);
    // The default outcome is the success itself.
    expect(line['outcome/mean']).toBeCloseTo(line['env/success']!, 12);
  });
});
