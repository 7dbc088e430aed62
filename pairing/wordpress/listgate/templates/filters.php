<?php
/**
 * The search filters of [listgate_listings]. A GET form: other query
 * variables of the page (page_id, …) are carried as hidden inputs.
 *
 * @package Listgate
 *
 * @var array $args "values" (lg_* => current value), "types", "suburbs",
 *                  "bedrooms" (value => label),
 *                  "action" (URL), "hidden" (name => value), "reset_url",
 *                  "has_filters" (bool).
 */

defined( 'ABSPATH' ) || exit;

$listgate_values = $args['values'];
?>
<form class="listgate-filters" method="get" action="<?php echo esc_url( $args['action'] ); ?>" role="search">
	<?php foreach ( $args['hidden'] as $listgate_name => $listgate_value ) : ?>
		<input type="hidden" name="<?php echo esc_attr( $listgate_name ); ?>" value="<?php echo esc_attr( $listgate_value ); ?>">
	<?php endforeach; ?>

	<p class="listgate-filter listgate-filter-type">
		<label for="listgate-lg-type"><?php esc_html_e( 'Type', 'listgate' ); ?></label>
		<select name="lg_type" id="listgate-lg-type">
			<option value=""><?php esc_html_e( 'Any type', 'listgate' ); ?></option>
			<?php foreach ( $args['types'] as $listgate_value => $listgate_label ) : ?>
				<option value="<?php echo esc_attr( $listgate_value ); ?>" <?php selected( $listgate_values['lg_type'], (string) $listgate_value ); ?>><?php echo esc_html( $listgate_label ); ?></option>
			<?php endforeach; ?>
		</select>
	</p>

	<p class="listgate-filter listgate-filter-suburb">
		<label for="listgate-lg-suburb"><?php esc_html_e( 'Suburb', 'listgate' ); ?></label>
		<select name="lg_suburb" id="listgate-lg-suburb">
			<option value=""><?php esc_html_e( 'Any suburb', 'listgate' ); ?></option>
			<?php foreach ( $args['suburbs'] as $listgate_value => $listgate_label ) : ?>
				<option value="<?php echo esc_attr( $listgate_value ); ?>" <?php selected( $listgate_values['lg_suburb'], (string) $listgate_value ); ?>><?php echo esc_html( $listgate_label ); ?></option>
			<?php endforeach; ?>
		</select>
	</p>

	<p class="listgate-filter listgate-filter-price-min">
		<label for="listgate-lg-price-min"><?php esc_html_e( 'Min price', 'listgate' ); ?></label>
		<input type="number" name="lg_price_min" id="listgate-lg-price-min" min="0" step="any" inputmode="numeric"
			value="<?php echo esc_attr( $listgate_values['lg_price_min'] ); ?>"
			placeholder="<?php esc_attr_e( 'Any', 'listgate' ); ?>">
	</p>

	<p class="listgate-filter listgate-filter-price-max">
		<label for="listgate-lg-price-max"><?php esc_html_e( 'Max price', 'listgate' ); ?></label>
		<input type="number" name="lg_price_max" id="listgate-lg-price-max" min="0" step="any" inputmode="numeric"
			value="<?php echo esc_attr( $listgate_values['lg_price_max'] ); ?>"
			placeholder="<?php esc_attr_e( 'Any', 'listgate' ); ?>">
	</p>

	<p class="listgate-filter listgate-filter-bedrooms">
		<label for="listgate-lg-bedrooms"><?php esc_html_e( 'Bedrooms', 'listgate' ); ?></label>
		<select name="lg_bedrooms" id="listgate-lg-bedrooms">
			<option value=""><?php esc_html_e( 'Any', 'listgate' ); ?></option>
			<?php foreach ( $args['bedrooms'] as $listgate_value => $listgate_label ) : ?>
				<option value="<?php echo esc_attr( $listgate_value ); ?>" <?php selected( $listgate_values['lg_bedrooms'], (string) $listgate_value ); ?>><?php echo esc_html( $listgate_label ); ?></option>
			<?php endforeach; ?>
		</select>
	</p>

	<p class="listgate-filter listgate-filter-actions">
		<button type="submit" class="listgate-filter-submit"><?php esc_html_e( 'Search', 'listgate' ); ?></button>
		<?php if ( $args['has_filters'] ) : ?>
			<a class="listgate-filter-reset" href="<?php echo esc_url( $args['reset_url'] ); ?>"><?php esc_html_e( 'Clear filters', 'listgate' ); ?></a>
		<?php endif; ?>
	</p>
</form>
