// A labelled form field with the API's messages for it shown underneath (aria-describedby).
import { useId, type ReactElement, cloneElement } from 'react';
import type { ApiProblem } from '../lib/api-problem';

export function Field({ label, name, problem, hint, children }: { label: string; name: string; problem?: ApiProblem; hint?: string; children: ReactElement<Record<string, unknown>> }) {
  const id = useId();
  const errors = problem?.forField(name) ?? [];
  const describedBy = [hint ? `${id}-hint` : '', errors.length ? `${id}-errors` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className={errors.length ? 'field field-invalid' : 'field'}>
      <label htmlFor={id}>{label}</label>
      {cloneElement(children, { id, name, 'aria-invalid': errors.length ? true : undefined, 'aria-describedby': describedBy })}
      {hint && (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      )}
      {errors.length > 0 && (
        <ul id={`${id}-errors`} className="field-errors">
          {errors.map((message) => (
            <li key={message}>{message}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The errors of a form that name no field of it (non_field_errors, detail, or unknown fields). */
export function FormErrors({ problem, fields }: { problem?: ApiProblem; fields: string[] }) {
  if (!problem) return null;
  const other = Object.entries(problem.fieldErrors)
    .filter(([name]) => !fields.some((f) => name === f || name.startsWith(`${f}.`)))
    .flatMap(([name, messages]) => messages.map((m) => (name === 'non_field_errors' ? m : `${name}: ${m}`)));
  const messages = Object.keys(problem.fieldErrors).length ? other : [problem.message];
  if (!messages.length) return null;
  return (
    <div className="form-errors" role="alert">
      {messages.map((m) => (
        <p key={m}>{m}</p>
      ))}
    </div>
  );
}
