/**
 * What a command answers. Its own module because the handler, the history views and the view
 * wording all answer with it, and none of them should import another for a type.
 */

/** What a command answers: the text for the model, and whether it is a failure outcome. */
export interface ToolOutput {
  /** The contract's string for the outcome, byte for byte (see CONTRACT.md). */
  text: string;
  /** True for every failure outcome; send it as the tool_result's `is_error`. */
  isError: boolean;
}
