/** A solver of majority voting and summary: the question alone, so the K answers are independent samples. */
export const VOTE_SOLVER_PROMPT = `You are a Solver. Problem: {question}

Solve the problem step by step. Reason inside <think> </think>, then give the final answer inside \\boxed{}.`;

export const SUMMARIZER_PROMPT = `You are the Summarizer of a team that solves math problems. Problem: {question}

The team's solutions:
{team_context}

Compare the solutions, decide which answer is right, and give the final answer inside \\boxed{}.`;

/** A debater's prompt; `{name}` is filled with the debater's role when the orchestra is built. */
export const DEBATER_PROMPT = `You are {name}, a debater. Question: {question}

Debate so far:
{team_context}

Argue your position, answer the other debaters' points, and give your answer inside \\boxed{}.`;

/** The judge's prompt; `{debaters}` is filled with the debaters' roles when the orchestra is built. */
export const DEBATE_JUDGE_PROMPT = `You are the Judge of a debate. Question: {question}

The debate:
{team_context}

Decide which debater argued best and is right. End with <verdict>NAME</verdict>, NAME one of: {debaters}.`;
