// Bad input found by the runner (options, state directory, target files): runScenario prints it as
// is and ends with exit code 2.

export class InputError extends Error {}
