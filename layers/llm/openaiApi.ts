/** Where an LLM setting without `base_url` sends its requests: the OpenAI API itself. */
export const OPENAI_API = "https://api.openai.com/v1"
