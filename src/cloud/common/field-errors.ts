// Collects 400 errors about items of a list field, in the nested format the HTTP layer uses for
// schema errors too: {"gcps": {"1": {"point_type": ["..."]}}}.
import { ValidationError, type FieldErrors } from '../../infra/http/errors.ts';

export class ItemErrors {
  private readonly errors: FieldErrors = {};

  constructor(private readonly field: string) {}

  add(index: number, subfield: string, message: string): void {
    const item = (this.errors[String(index)] ??= {}) as FieldErrors;
    const list = (item[subfield] ??= []) as string[];
    list.push(message);
  }

  get empty(): boolean {
    return Object.keys(this.errors).length === 0;
  }

  /** Throws the collected errors as one 400, if any. */
  throwIfAny(): void {
    if (!this.empty) throw new ValidationError({ [this.field]: this.errors });
  }
}
