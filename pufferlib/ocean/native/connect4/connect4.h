/* Connect Four: two players in self-play (one agent row each), the legal-action mask in the observation.
 *
 * A 6 x 7 board; players drop pieces into columns (Discrete(7): the column) and the first to line
 * up four (row, column or diagonal) wins. Both rows are stepped every call; only the move of the
 * player to move is played, the other row's action is ignored.
 *
 * Observation of each row (uint8, CONNECT4_OBS = 92), the same layout for both players, from the
 * row's own point of view; the fields in name order, as pufferlib.emulation lays out a Dict:
 *   [0, 7)    `action_mask`: the player to move gets 1 for every column that is not full; the
 *             waiting row gets a single 1 (its lowest legal column), so its only allowed action
 *             is a placeholder whose log-probability is 0: it learns its value (the outcome reaches
 *             it), never a move.
 *   [7, 49)   `board` plane 0: 1 where this row's pieces are (6 rows top to bottom x 7 columns)
 *   [49, 91)  `board` plane 1: 1 where the opponent's pieces are
 *   [91]      `to_move`: 1 when this row moves now
 * Both rows keep mask 1 (present) for the whole game: a trainer treats a mask-0 row as absent, so
 * a waiting row with mask 0 would cut the return chain at every move and never receive the -1 of
 * a game lost on the opponent's move.
 *
 * Rewards: +1 to the winner and -1 to the loser on the winning move, 0 to both on a draw (a full
 * board) and 0 on every other move. An illegal move (a full column; out-of-range columns are
 * refused by the glue before c_step, and ignored here) loses the game for the player to move, as
 * in PettingZoo's classic games: -1 to it, 0 to the opponent, and the log's `illegal` counts it.
 *
 * Terminals, truncation and autoreset: a game ends on a win, a draw or an illegal move; terminal = 1
 * on both rows in that step, the game is logged, and the next game starts in the same step (the
 * observations returned are its first). Truncation is never set (a game lasts at most 42 moves).
 * The first player alternates game by game; the first game's is drawn from the env's seeded RNG
 * (the game itself has no chance).
 *
 * Log (per game, summed; "p0" is row 0, "p1" row 1): episode_return and score are row 0's return,
 * episode_length the number of moves, then p0/p1 wins, draws, losses (a game is won by the higher
 * return: an illegal move loses it), first_wins (games won by the player who moved first), illegal
 * (games ended by an illegal move), n.
 */
#ifndef OCEAN_CONNECT4_H
#define OCEAN_CONNECT4_H

#include "../puffernative.h"

#define CONNECT4_ROWS 6
#define CONNECT4_COLS 7
#define CONNECT4_CELLS (CONNECT4_ROWS * CONNECT4_COLS)
#define CONNECT4_OBS (CONNECT4_COLS + 2 * CONNECT4_CELLS + 1)
#define CONNECT4_RENDER_H 280
#define CONNECT4_RENDER_W 320
#define CONNECT4_CELL 40

#define LOG_FIELDS(X) X(episode_return) X(episode_length) X(score) X(p0_wins) X(p0_draws) X(p0_losses) X(p1_wins) \
    X(p1_draws) X(p1_losses) X(first_wins) X(illegal) X(n)
PN_LOG_STRUCT(LOG_FIELDS);

typedef struct {
    PN_ENV_FIELDS(unsigned char); /* num_agents = 2 */
    /* state */
    unsigned char board[CONNECT4_CELLS]; /* row-major, row 0 at the top: 0 empty, 1 + player */
    int heights[CONNECT4_COLS];          /* pieces in each column */
    int to_move, first, moves;
    int last; /* cell of the last move, -1 at the start of a game */
} Connect4;

static void connect4_new_game(Connect4* env, int first) {
    memset(env->board, 0, sizeof(env->board));
    memset(env->heights, 0, sizeof(env->heights));
    env->first = env->to_move = first;
    env->moves = 0;
    env->last = -1;
}

static void connect4_observe(Connect4* env) {
    int legal_lowest = 0;
    while (legal_lowest < CONNECT4_COLS - 1 && env->heights[legal_lowest] >= CONNECT4_ROWS) legal_lowest++;
    for (int p = 0; p < 2; p++) {
        unsigned char* mask = env->observations + (size_t)p * CONNECT4_OBS;
        unsigned char* board = mask + CONNECT4_COLS;
        for (int k = 0; k < CONNECT4_CELLS; k++) {
            board[k] = env->board[k] == 1 + p;
            board[CONNECT4_CELLS + k] = env->board[k] == 2 - p;
        }
        board[2 * CONNECT4_CELLS] = env->to_move == p;
        for (int c = 0; c < CONNECT4_COLS; c++)
            mask[c] = env->to_move == p ? env->heights[c] < CONNECT4_ROWS : c == legal_lowest;
        env->masks[p] = 1;
    }
}

void c_reset(Connect4* env) {
    connect4_new_game(env, pn_randint(&env->rng, 2));
    for (int p = 0; p < 2; p++) env->rewards[p] = 0, env->terminals[p] = 0, env->truncations[p] = 0;
    connect4_observe(env);
}

/* Four in a line through `cell` for the piece there. */
static int connect4_wins(const Connect4* env, int cell) {
    static const int DIRS[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    int r0 = cell / CONNECT4_COLS, c0 = cell % CONNECT4_COLS, piece = env->board[cell];
    for (int d = 0; d < 4; d++) {
        int count = 1;
        for (int sign = -1; sign <= 1; sign += 2) {
            int r = r0 + sign * DIRS[d][0], c = c0 + sign * DIRS[d][1];
            while (r >= 0 && r < CONNECT4_ROWS && c >= 0 && c < CONNECT4_COLS &&
                   env->board[r * CONNECT4_COLS + c] == piece)
                count++, r += sign * DIRS[d][0], c += sign * DIRS[d][1];
        }
        if (count >= 4) return 1;
    }
    return 0;
}

/* The game is over: result[p] is +1 win, 0 draw, -1 loss for row p (illegal: the offender -1, 0). */
static void connect4_end(Connect4* env, const float result[2], int illegal) {
    for (int p = 0; p < 2; p++) env->rewards[p] = result[p], env->terminals[p] = 1;
    Log* log = &env->log;
    log->episode_return += result[0];
    log->score += result[0];
    log->episode_length += (float)env->moves;
    log->p0_wins += result[0] > result[1], log->p0_draws += result[0] == result[1];
    log->p0_losses += result[0] < result[1];
    log->p1_wins += result[1] > result[0], log->p1_draws += result[1] == result[0];
    log->p1_losses += result[1] < result[0];
    log->first_wins += result[env->first] > result[1 - env->first];
    log->illegal += (float)illegal;
    log->n += 1;
    connect4_new_game(env, 1 - env->first);
}

void c_step(Connect4* env) {
    int p = env->to_move, col = env->actions[p];
    for (int q = 0; q < 2; q++) env->rewards[q] = 0, env->terminals[q] = 0, env->truncations[q] = 0;
    if (col < 0 || col >= CONNECT4_COLS || env->heights[col] >= CONNECT4_ROWS) {
        float result[2];
        result[p] = -1, result[1 - p] = 0;
        env->moves++;
        connect4_end(env, result, 1);
    } else {
        int cell = (CONNECT4_ROWS - 1 - env->heights[col]) * CONNECT4_COLS + col;
        env->board[cell] = (unsigned char)(1 + p);
        env->heights[col]++;
        env->moves++;
        env->last = cell;
        if (connect4_wins(env, cell)) {
            float result[2];
            result[p] = 1, result[1 - p] = -1;
            connect4_end(env, result, 0);
        } else if (env->moves == CONNECT4_CELLS) {
            const float draw[2] = {0, 0};
            connect4_end(env, draw, 0);
        } else {
            env->to_move = 1 - p;
        }
    }
    connect4_observe(env);
}

/* A blue board, empty holes dark, row 0's pieces red, row 1's yellow, the last move ringed white;
 * the bar under the board shows whose turn it is. */
void c_render(Connect4* env, unsigned char* rgb) {
    const int H = CONNECT4_RENDER_H, W = CONNECT4_RENDER_W, S = CONNECT4_CELL;
    const int x0 = (W - CONNECT4_COLS * S) / 2, y0 = 10;
    static const unsigned char COLOURS[3][3] = {{20, 20, 40}, {230, 40, 40}, {240, 210, 30}};
    pn_clear(rgb, H, W, 30, 30, 30);
    pn_fill_rect(rgb, H, W, x0, y0, CONNECT4_COLS * S, CONNECT4_ROWS * S, 20, 60, 200);
    for (int k = 0; k < CONNECT4_CELLS; k++) {
        int cx = x0 + (k % CONNECT4_COLS) * S + S / 2, cy = y0 + (k / CONNECT4_COLS) * S + S / 2;
        int radius = S / 2 - 4;
        for (int dy = -radius - 2; dy <= radius + 2; dy++) {
            for (int dx = -radius - 2; dx <= radius + 2; dx++) {
                int d2 = dx * dx + dy * dy, x = cx + dx, y = cy + dy;
                if (x < 0 || x >= W || y < 0 || y >= H) continue;
                unsigned char* px = rgb + ((size_t)y * W + x) * 3;
                const unsigned char* col = COLOURS[env->board[k]];
                if (d2 <= radius * radius) {
                    px[0] = col[0], px[1] = col[1], px[2] = col[2];
                } else if (k == env->last && d2 <= (radius + 2) * (radius + 2)) {
                    px[0] = px[1] = px[2] = 255;
                }
            }
        }
    }
    const unsigned char* turn = COLOURS[1 + env->to_move];
    pn_fill_rect(rgb, H, W, x0, y0 + CONNECT4_ROWS * S + 8, CONNECT4_COLS * S, 12, turn[0], turn[1], turn[2]);
}

/* The board as text: 'X' row 0, 'O' row 1, '.' empty, column numbers under it, then whose turn. */
int c_ansi(Connect4* env, char* out, int size) {
    static const char PIECES[3] = {'.', 'X', 'O'};
    if (size <= 0) return 0;
    out[0] = '\0';
    int len = 0;
    for (int r = 0; r < CONNECT4_ROWS; r++) {
        for (int c = 0; c < CONNECT4_COLS; c++)
            len = pn_append(out, size, len, c ? " %c" : "%c", PIECES[env->board[r * CONNECT4_COLS + c]]);
        len = pn_append(out, size, len, "\n");
    }
    len = pn_append(out, size, len, "0 1 2 3 4 5 6\n%c (player %d) to move, move %d\n", PIECES[1 + env->to_move],
                    env->to_move, env->moves + 1);
    return len;
}

void c_close(Connect4* env) { (void)env; /* nothing allocated */ }

#endif
