import type { ReactNode } from "react"

/**
 * A settings list as a table that scrolls sideways on a narrow screen (a focusable region, so
 * keyboard users can scroll it too), named for screen readers, with a last column for the row's
 * actions.
 */
export const SettingsTable = ({ children, columns, label }: {
  readonly label: string
  /** Column headings; `false` leaves a column out (one the caller's role does not see). */
  readonly columns: ReadonlyArray<string | false>
  readonly children: ReactNode
}) => (
  <div className="table-scroll" tabIndex={0} role="region" aria-label={label}>
    <table>
      <caption className="visually-hidden">{label}</caption>
      <thead>
        <tr>
          {columns.filter((column) => column !== false).map((column) => <th key={column} scope="col">{column}</th>)}
          <th scope="col">
            <span className="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  </div>
)
